/**
 * One first-touch sample of the annotation queue perf (annotation.perf.ts), in a fresh process:
 *   node annotation.child.ts <subject|baseline> <bundle.cjs> <store.sqlite>
 * subject: the product path from the bundle (open the store, open the 10,000-item queue, serve the first item with
 * its evidence; then 20 × record a verdict and serve the next item). baseline: the same rows read straight from
 * SQLite (the first pending judgement and its run's step rows; then the next 20 pending rows one by one).
 * Prints one JSON line { firstMs, nextMs[] }.
 */
import { createRequire } from 'node:module';

const [mode, bundle, file] = process.argv.slice(2) as [string, string, string];
const require = createRequire(import.meta.url);
const t0 = performance.now();
if (mode === 'subject') {
  const m = require(bundle) as typeof import('./annotation-entry.ts');
  const rs = m.openStore(file);
  const store = m.annotationStoreOf(rs);
  const q = await store.openQueue({ kind: 'items' });
  let e = await store.nextItem(q.id, 'perf');
  let s = await m.annotationState(store, rs, q, 'perf', e);
  const firstMs = performance.now() - t0;
  if (!s.item) throw new Error('no first item');
  const nextMs: number[] = [];
  const annotateMs: number[] = [];
  for (let i = 0; i < 20; i++) {
    const ta = performance.now();
    await store.annotate({
      itemId: e!.item.id,
      annotator: 'perf',
      verdict: { supported: i % 2 === 0, reason: 'perf' },
      queueId: q.id,
      origin: 'panel',
    });
    const t = performance.now();
    annotateMs.push(t - ta);
    e = await store.nextItem(q.id, 'perf', { afterPos: e!.pos });
    s = await m.annotationState(store, rs, q, 'perf', e);
    nextMs.push(performance.now() - t);
    if (!s.item) throw new Error('no next item');
  }
  rs.close();
  console.log(JSON.stringify({ firstMs, nextMs, annotateMs, size: s.queue.total }));
} else {
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
  const db = new Database(file, { readonly: true });
  const first = db
    .prepare("SELECT * FROM judgements WHERE status = 'pending' ORDER BY judged_at, rowid LIMIT 1")
    .get() as { run_id: string; rowid?: number };
  db.prepare('SELECT idx, assistant, tool_calls FROM steps WHERE run_id = ? ORDER BY idx').all(first.run_id);
  const firstMs = performance.now() - t0;
  const nextMs: number[] = [];
  for (let i = 1; i <= 20; i++) {
    const t = performance.now();
    db.prepare("SELECT * FROM judgements WHERE status = 'pending' ORDER BY judged_at, rowid LIMIT 1 OFFSET ?").get(i);
    nextMs.push(performance.now() - t);
  }
  db.close();
  console.log(JSON.stringify({ firstMs, nextMs }));
}
