/**
 * One annotator in its own process (the team-store test): opens the PostgreSQL store at argv[2], annotates every item
 * of queue argv[3] it is served as annotator argv[4] (a pause of argv[6] ms between items), and meanwhile polls the
 * queue's progress every 50 ms; prints one JSON line per event: `annotated` (item, time) and `seen` (annotator argv[5]'s
 * count, time), then `done` when the other annotator has finished as many items as this one and it saw them.
 */
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import { openStoreAt } from '../../src/core/store/open.ts';

const [url, queueId, me, other, pauseText, totalText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const total = Number(totalText);
const rs = await openStoreAt(url);
const store = annotationStoreOf(rs);
const say = (o: Record<string, unknown>) => process.stdout.write(JSON.stringify(o) + '\n');
let seen = 0;
let stop = false;
const poll = (async () => {
  while (!stop) {
    const n = (await store.progress(queueId)).byAnnotator[other] ?? 0;
    if (n > seen) {
      seen = n;
      say({ event: 'seen', count: n, at: Date.now() });
    }
    if (seen >= total) break;
    await new Promise((r) => setTimeout(r, 50));
  }
})();
let mine = 0;
for (;;) {
  const e = await store.nextItem(queueId, me);
  if (!e) break;
  await store.annotate({
    itemId: e.item.id,
    annotator: me,
    verdict: { supported: mine % 3 !== 0 || me === 'ana', reason: `${me} ${mine}` },
    queueId,
    origin: 'panel',
  });
  mine++;
  say({ event: 'annotated', item: e.item.id, count: mine, at: Date.now() });
  await new Promise((r) => setTimeout(r, Number(pauseText)));
}
await poll;
stop = true;
say({ event: 'done', mine, seen });
await rs.close();
