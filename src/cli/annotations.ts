/**
 * `loupe annotations` (list, answer, queue, export, import) and `loupe agreement`: the annotation model from the
 * command line — the same store and rules as the expert annotation panel. Source: issue 14.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  agreementReport,
  annotationStoreOf,
  annotatorLabel,
  rolesByAnnotator,
  parseJsonl,
  toJsonl,
  type AgreementGroup,
  type EvidenceRef,
  type ItemFilter,
  type QueueSpec,
} from '../core/annotations/index.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError, type CliIo } from './types.ts';
import { EXPERIMENT_OPTIONS, JSON_OPTIONS } from './option-groups.ts';
import { experimentItems, queueSubcommand } from './annotations-queues.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const FILTER = optionGroup('items', {
  task: { type: 'string', value: 'T', help: 'only items of this judge task' },
  suite: { type: 'string', value: 'S', help: 'only items of runs of this benchmark' },
  run: { type: 'string', multiple: true, value: 'ID', help: 'only items of this run (repeatable)' },
  criterion: { type: 'string', value: 'TEXT', help: 'only items of this criterion' },
});

const DECL = declareCommand({
  synopsis: 'annotations <list|answer|queue|export|import|instructions|assign|progress|pending>',
  positionals: true,
  groups: [
    FILTER,
    optionGroup('answer', {
      item: { type: 'string', value: 'ID', help: 'the item answered' },
      verdict: { type: 'string', value: 'JSON', help: "the verdict (validated against the item's schema)" },
      annotator: {
        type: 'string',
        value: 'NAME',
        help: 'who answers (default $LOUPE_ANNOTATOR, else git user.name, else the OS user)',
      },
      note: { type: 'string', value: 'TEXT', help: 'a note with the verdict' },
      cite: {
        type: 'string',
        multiple: true,
        value: 'step:RUN:N|cell:RUN:SEQ|doc:PATH[#PAGE]',
        help: 'evidence (repeatable)',
      },
      supersedes: { type: 'string', value: 'ANNOTATION', help: 'the annotation this one replaces' },
      adjudicate: { type: 'boolean', help: 'make the verdict final' },
    }),
    optionGroup('queue', {
      kind: { type: 'string', value: 'items|audit|disagreement', help: 'what the queue holds' },
      reviewers: { type: 'string', value: 'N', help: 'annotators per item' },
      'per-criterion': { type: 'string', value: 'N', help: 'items sampled per criterion' },
      seed: { type: 'string', value: 'N', help: 'the sampling seed' },
      'all-items': { type: 'boolean', help: 'every item, not a sample' },
    }),
    optionGroup('instructions and assignment', {
      queue: { type: 'string', value: 'ID', help: 'the queue (instructions, assign, progress, pending)' },
      text: { type: 'string', value: 'MARKDOWN', help: 'instructions: the labelling instructions (empty: clear them)' },
      file: { type: 'string', value: 'FILE.md', help: 'instructions: read them from a file' },
      to: { type: 'string', value: 'NAME', help: 'assign: the annotator' },
      count: { type: 'string', value: 'N', help: 'assign: the next N unassigned items (queue order)' },
      unassign: { type: 'boolean', help: 'assign: to nobody' },
    }),
    EXPERIMENT_OPTIONS,
    optionGroup('export', {
      out: { type: 'string', value: 'FILE.jsonl', help: 'where export writes' },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  list    items with their current human verdicts and resolution (adjudicated > majority > single > pending)
  answer  --item ID --verdict JSON: records a verdict; --adjudicate makes it final
  queue   opens (or refreshes) a queue and prints its progress and next item for --annotator
  export  --out FILE.jsonl: every item with annotations and all its annotations (history included)
  import  FILE.jsonl: idempotent by annotation id; refuses a file from another verdict-schema or suite version
  instructions --queue ID [--text MARKDOWN | --file FILE.md]: shows or sets the queue's labelling instructions
  assign --queue ID --to NAME (--item ID[,ID] | --count N | --all-items): assigns items (--unassign: to nobody)
  progress --queue ID: items assigned and done per annotator
  pending: the items assigned to --annotator not labelled yet (every queue, or --queue)
  --experiment TAG (list, queue, progress, pending): only items of runs tagged TAG`,
});

const AGREEMENT = declareCommand({
  synopsis: 'agreement',
  groups: [
    FILTER,
    optionGroup('bootstrap', {
      resamples: { type: 'string', value: 'N', help: 'bootstrap resamples of items' },
      seed: { type: 'string', value: 'N', help: 'the bootstrap seed' },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  per task and criterion: percent and pairwise agreement, Cohen's κ (two annotators), Krippendorff's α (nominal;
  interval and ordinal for 1–5 scores), Gwet's AC1/AC2, each with a bootstrap 95% CI; LLM judge vs each human and
  vs the human resolution, with a confusion matrix.`,
});

function filterOf(v: {
  task?: string | undefined;
  suite?: string | undefined;
  run?: string[] | undefined;
  criterion?: string | undefined;
}): ItemFilter {
  return {
    ...(v.task ? { task: v.task } : {}),
    ...(v.suite ? { suite: v.suite } : {}),
    ...(v.run?.length ? { runIds: v.run } : {}),
    ...(v.criterion ? { criterion: v.criterion } : {}),
  };
}

/** `step:RUN:N`, `cell:RUN:SEQ`, `doc:PATH[#PAGE]` → evidence. @throws UsageError for another form. */
export function parseCite(s: string): EvidenceRef {
  const m = /^(step|cell):([^:]+):(\d+)$/.exec(s);
  if (m) {
    return m[1] === 'step'
      ? { kind: 'step', runId: m[2]!, step: Number(m[3]) }
      : { kind: 'cell', runId: m[2]!, seq: Number(m[3]) };
  }
  const d = /^doc:(.+?)(?:#(\d+))?$/.exec(s);
  if (d) return { kind: 'doc', path: d[1]!, ...(d[2] ? { page: Number(d[2]) } : {}) };
  throw new UsageError(`--cite ${s}: expected step:RUN:N, cell:RUN:SEQ or doc:PATH[#PAGE]`);
}

const intArg = (v: string | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new UsageError(`${flag} must be a whole number, got '${v}'`);
  return Number(v);
};

async function annotations(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help') {
    throw new UsageError(
      'give a subcommand: list, answer, queue, export, import, instructions, assign, progress or pending',
    );
  }
  const { values, positionals } = parseCommand(DECL, rest);
  const rs = await openExistingStore(io, values.store);
  try {
    const store = annotationStoreOf(rs);
    const within = await experimentItems(rs, values.experiment);
    const filter = filterOf(values);
    const who = values.annotator ?? annotatorId(io.env);
    const done = await queueSubcommand(sub, rs, values, who, io);
    if (done !== undefined) return done;
    switch (sub) {
      case 'list': {
        await store.syncFromJudgements();
        const items = (await store.listItems(filter)).filter((i) => !within || within.has(i.id));
        const rows = [];
        for (const i of items) {
          const res = await store.resolve(i.id);
          const orphaned = i.runId ? !(await store.runExists(i.runId)) : false;
          const roles = Object.keys(res.humanLabels).length ? rolesByAnnotator(await store.annotations(i.id)) : {};
          rows.push({
            id: i.id,
            task: i.task,
            criterion: i.criterion,
            suite: i.suite,
            runId: i.runId,
            orphaned,
            decidedBy: res.decidedBy,
            humanLabels: res.humanLabels,
            roles,
            verdict: res.verdict,
          });
        }
        if (values.json) io.out(JSON.stringify({ items: rows }, null, 1) + '\n');
        else {
          for (const r of rows) {
            io.out(
              `${r.id}  ${r.task}  ${r.decidedBy}${
                Object.keys(r.humanLabels).length
                  ? `  ${Object.entries(r.humanLabels)
                      .map(([k, v]) => `${annotatorLabel(k, r.roles[k])}=${v}`)
                      .join(' ')}`
                  : ''
              }${r.orphaned ? '  (orphaned: run deleted)' : ''}${r.criterion ? `\n    ${r.criterion.slice(0, 100)}` : ''}\n`,
            );
          }
          io.out(`${rows.length} item(s)\n`);
        }
        return 0;
      }
      case 'answer': {
        if (!values.item) throw new UsageError('--item ID is required');
        if (!values.verdict) throw new UsageError('--verdict JSON is required');
        let verdict: unknown;
        try {
          verdict = JSON.parse(values.verdict);
        } catch {
          throw new UsageError(`--verdict is not JSON: ${values.verdict}`);
        }
        await store.syncFromJudgements();
        const a = await store.annotate({
          itemId: values.item,
          annotator: who,
          verdict,
          evidence: (values.cite ?? []).map(parseCite),
          ...(values.note ? { note: values.note } : {}),
          ...(values.supersedes ? { supersedes: values.supersedes } : {}),
          role: values.adjudicate ? 'adjudicator' : 'annotator',
          origin: 'cli',
        });
        const res = await store.resolve(a.itemId);
        if (values.json) io.out(JSON.stringify({ annotation: a, resolution: res }, null, 1) + '\n');
        else {
          io.out(
            `recorded ${a.id} by ${annotatorLabel(a.annotator, a.dbRole ? [a.dbRole] : [])}${a.final ? ' (final)' : ''}; item now ${res.decidedBy}\n`,
          );
        }
        return 0;
      }
      case 'queue': {
        const kind = (values.kind ?? 'items') as QueueSpec['kind'];
        if (!['items', 'audit', 'disagreement'].includes(kind)) {
          throw new UsageError(`--kind must be items, audit or disagreement, got '${kind}'`);
        }
        const per = intArg(values['per-criterion'], '--per-criterion');
        const seed = intArg(values.seed, '--seed');
        const spec: QueueSpec = {
          kind,
          ...(values.task ? { task: values.task } : {}),
          ...(values.suite ? { suite: values.suite } : {}),
          ...(values.run?.length ? { runIds: values.run } : {}),
          ...(values.criterion ? { criterion: values.criterion } : {}),
          ...(values['all-items'] ? { includeResolved: true } : {}),
          ...(per !== undefined ? { perCriterion: per } : {}),
          ...(seed !== undefined ? { seed } : {}),
        };
        const reviewers = intArg(values.reviewers, '--reviewers');
        const q = await store.openQueue(spec, reviewers !== undefined ? { reviewers } : {});
        const p = await store.progress(q.id);
        const next = await store.nextItem(
          q.id,
          who,
          within ? { pick: (es) => es.find((e) => within.has(e.item.id)) } : {},
        );
        if (next) await store.release(q.id, next.item.id, who);
        if (values.json) {
          io.out(
            JSON.stringify(
              { queue: q, progress: p, next: next ? { pos: next.pos, itemId: next.item.id } : null },
              null,
              1,
            ) + '\n',
          );
        } else {
          io.out(
            `${q.id}  ${q.name}\n  ${p.done} / ${p.total} done  (${q.reviewers} reviewer(s) per item)${
              Object.keys(p.byAnnotator).length
                ? `  ${Object.entries(p.byAnnotator)
                    .map(([k, v]) => `${annotatorLabel(k, p.roles[k])}: ${v}`)
                    .join(', ')}`
                : ''
            }\n  next for ${who}: ${next ? `${next.item.id} (#${next.pos + 1})` : 'nothing left'}\n`,
          );
        }
        return 0;
      }
      case 'export': {
        if (!values.out) throw new UsageError('--out FILE.jsonl is required');
        const recs = await store.exportRecords(filter);
        const file = resolve(io.cwd, values.out);
        writeFileSync(file, toJsonl(recs));
        const n = recs.filter((r) => r.type === 'annotation').length;
        io.out(`wrote ${file}: ${recs.filter((r) => r.type === 'item').length} item(s), ${n} annotation(s)\n`);
        return 0;
      }
      case 'import': {
        const f = positionals[0];
        if (!f) throw new UsageError('give the FILE.jsonl to import');
        const file = resolve(io.cwd, f);
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (e) {
          throw new LoupeInputError(file, `cannot read: ${(e as Error).message}`);
        }
        const r = await store.importRecords(parseJsonl(text, file), file);
        io.out(`imported ${r.annotations} annotation(s) and ${r.items} item(s); ${r.unchanged} already present\n`);
        return 0;
      }
      default:
        throw new UsageError(
          `unknown subcommand '${sub}' (list, answer, queue, export, import, instructions, assign, progress, pending)`,
        );
    }
  } finally {
    await rs.close();
  }
}

const f3 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(3));
const ci = (e: { value: number | null; ci: { low: number | null; high: number | null } | null } | null) =>
  e ? `${f3(e.value)}${e.ci ? ` [${f3(e.ci.low)}, ${f3(e.ci.high)}]` : ''}` : '—';

/** Text lines of one agreement group. */
export function agreementLines(g: AgreementGroup): string[] {
  const out = [
    `${g.task}${g.criterion ? ` · ${g.criterion.slice(0, 80)}` : ''}  (${g.items} item(s), ${g.pairableItems} with ≥ 2 annotators; ${g.annotators.map((a) => annotatorLabel(a, g.roles[a])).join(', ') || 'no annotators'})`,
  ];
  out.push(
    `  percent ${f3(g.percentAgreement)}  pairwise ${f3(g.pairwiseAgreement)}  κ ${ci(g.cohensKappa)}  α nominal ${ci(g.alphaNominal)}${g.alphaInterval ? `  α interval ${ci(g.alphaInterval)}` : ''}${g.alphaOrdinal ? `  α ordinal ${ci(g.alphaOrdinal)}` : ''}  ${g.gwet.weights === 'identity' ? 'AC1' : 'AC2'} ${ci(g.gwet)}`,
  );
  for (const j of g.judgeHuman) {
    out.push(`  LLM judge vs ${j.against}: ${j.items} item(s), agreement ${f3(j.agreement)}, κ ${f3(j.kappa)}`);
  }
  return out;
}

export const annotationsCommand = defineCommand({
  name: 'annotations',
  summary: "list, answer, queue, export and import expert annotations (the annotation panel's store)",
  declarations: [DECL],
  run: annotations,
});

export const agreementCommand = defineCommand({
  name: 'agreement',
  summary: 'inter-annotator and judge–human agreement (κ, Krippendorff α, Gwet AC1/AC2, bootstrap CIs)',
  declarations: [AGREEMENT],
  async run(argv, io) {
    const { values } = parseCommand(AGREEMENT, argv);
    const rs = await openExistingStore(io, values.store);
    try {
      const resamples = intArg(values.resamples, '--resamples');
      const seed = intArg(values.seed, '--seed');
      const rep = await agreementReport(annotationStoreOf(rs), filterOf(values), {
        ...(resamples !== undefined ? { resamples } : {}),
        ...(seed !== undefined ? { seed } : {}),
      });
      if (values.json) io.out(JSON.stringify(rep, null, 1) + '\n');
      else {
        io.out(
          `${rep.totals.items} annotated item(s): ${rep.totals.adjudicated} adjudicated, ${rep.totals.majority} by majority, ${rep.totals.single} by one annotator, ${rep.totals.tied} tied\n`,
        );
        for (const g of rep.groups) io.out(agreementLines(g).join('\n') + '\n');
        io.out(
          `(bootstrap: ${rep.bootstrap.resamples} resamples of items, seed ${rep.bootstrap.seed}, 95% percentile intervals)\n`,
        );
      }
      return 0;
    } finally {
      await rs.close();
    }
  },
});
