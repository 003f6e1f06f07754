/**
 * `loupe failures`: failure-mode analysis from the command line (issue 19) — list and check taxonomies, open the
 * seeded failure-analysis or hallucination queue, tag steps or a report span, unit-based agreement per class.
 */
import { readFileSync } from 'node:fs';
import { annotationStoreOf, annotatorLabel } from '../core/annotations/index.ts';
import {
  failureTagAgreement,
  tagSpan,
  tagSteps,
  SEVERITIES,
  type Severity,
  type UnitAgreement,
} from '../core/failures/index.ts';
import { findTaxonomy, taxonomyCatalog } from '../app/failures/registry.ts';
import { openFailureQueue, openHallucinationQueue } from '../app/failures/sampling.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError, type CliIo } from './types.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'failures <taxonomies|queue|tag|agreement>',
  groups: [
    optionGroup('selection', {
      suite: { type: 'string', value: 'S', help: 'only runs of this benchmark' },
      run: { type: 'string', multiple: true, value: 'ID', help: 'only this run (repeatable)' },
      workspace: {
        type: 'string',
        value: 'DIR',
        help: 'the folder whose .loupe/taxonomies/*.json are read (default the working folder)',
      },
    }),
    optionGroup('queue', {
      kind: {
        type: 'string',
        value: 'failures|hallucination',
        help: 'items judged incorrect (DDR-Bench §6) or insights (§7)',
      },
      per: { type: 'string', value: 'N', help: 'samples per model × scenario (default 10)' },
      seed: { type: 'string', value: 'N', help: 'the sampling seed (default 0)' },
    }),
    optionGroup('tag', {
      steps: { type: 'string', value: 'A[-B]', help: 'the steps tagged, 1-based as shown' },
      span: { type: 'string', value: 'START-END', help: "a span [START, END) of characters of the artefact's text" },
      artefact: { type: 'string', value: 'NAME', help: 'the artefact the span is in' },
      'text-file': { type: 'string', value: 'FILE', help: "the artefact's text" },
      taxonomy: { type: 'string', value: 'ID', help: 'the taxonomy (tag, agreement)' },
      classes: { type: 'string', value: 'C1,C2', help: 'the classes tagged' },
      severity: { type: 'string', value: 'minor|major|critical', help: 'how bad' },
      note: { type: 'string', value: 'TEXT', help: 'a note with the tag' },
      annotator: {
        type: 'string',
        value: 'NAME',
        help: 'who tags (default $LOUPE_ANNOTATOR, else git user.name, else the OS user)',
      },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  taxonomies  the benchmarks' failure taxonomies and the workspace's (.loupe/taxonomies/*.json); files that do not
              load are listed with file:line and make the exit code 1
  queue       --kind ...: samples (seeded, N per model × scenario) items judged incorrect or insights and opens the queue
  tag         --run ID (--steps A[-B] | --span START-END --artefact NAME --text-file FILE) --taxonomy ID --classes C1,C2
  agreement   --taxonomy ID: per class, percent agreement, Cohen's κ (two annotators) and Krippendorff's α on units
              (steps of trajectories, sentences of reports), each unit carrying the set of classes tagged on it`,
});

const int = (v: string | undefined, flag: string, dflt: number): number => {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v)) throw new UsageError(`${flag} must be a whole number, got '${v}'`);
  return Number(v);
};

function printAgreement(io: CliIo, a: UnitAgreement): void {
  io.out(
    `${a.unit === 'step' ? 'Trajectories (units = steps)' : 'Reports (units = sentences)'}: ${a.documents} documents, ${a.units} units, annotators ${a.annotators.map((w) => annotatorLabel(w, a.roles[w])).join(', ') || '—'}\n`,
  );
  const f = (x: number | null) => (x === null ? '—' : x.toFixed(3));
  for (const c of a.classes) {
    io.out(
      `  ${c.label.padEnd(34)} pairable ${String(c.pairableUnits).padStart(4)}  agree ${f(c.percentAgreement)}  κ ${f(c.cohensKappa)}  α ${f(c.alpha)}  positives ${Object.entries(
        c.positives,
      )
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}\n`,
    );
  }
}

async function failures(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help') throw new UsageError('give a subcommand: taxonomies, queue, tag or agreement');
  const { values } = parseCommand(DECL, rest);
  const catalog = taxonomyCatalog(values.workspace ?? io.cwd);
  if (sub === 'taxonomies') {
    if (values.json) io.out(JSON.stringify(catalog, null, 1) + '\n');
    else {
      for (const t of catalog.taxonomies) {
        io.out(
          `${t.id}  ${t.title}  [${t.origin === 'loupe' ? "Loupe's own" : t.origin}; ${t.source}]\n${t.classes.map((c) => `    ${c.id}: ${c.definition}`).join('\n')}\n`,
        );
      }
      for (const e of catalog.errors) io.err(`${e.message}\n`);
    }
    return catalog.errors.length ? 1 : 0;
  }
  const rs = await openExistingStore(io, values.store);
  try {
    const ann = annotationStoreOf(rs);
    const sel = {
      ...(values.suite ? { suite: values.suite } : {}),
      ...(values.run?.length ? { runIds: values.run } : {}),
    };
    switch (sub) {
      case 'queue': {
        if (values.kind !== 'failures' && values.kind !== 'hallucination') {
          throw new UsageError(`--kind must be failures or hallucination, got '${values.kind ?? ''}'`);
        }
        const s = { ...sel, perStratum: int(values.per, '--per', 10), seed: int(values.seed, '--seed', 0) };
        const q =
          values.kind === 'failures' ? await openFailureQueue(ann, rs, s) : await openHallucinationQueue(ann, rs, s);
        if (values.json) {
          io.out(
            JSON.stringify(
              {
                queue: q.queue.id,
                name: q.queue.name,
                items: q.items.map((i) => i.id),
                strata: q.strata,
                skipped: q.skipped,
              },
              null,
              1,
            ) + '\n',
          );
        } else {
          io.out(`${q.queue.name}: queue ${q.queue.id}, ${q.items.length} items\n`);
          for (const st of q.strata) io.out(`  ${st.stratum}: ${st.sampled} of ${st.population}\n`);
          if (q.skipped.length) {
            io.out(
              `  skipped ${q.skipped.length} runs (${q.skipped
                .slice(0, 3)
                .map((x) => `${x.runId}: ${x.reason}`)
                .join('; ')}${q.skipped.length > 3 ? '; …' : ''})\n`,
            );
          }
        }
        return 0;
      }
      case 'tag': {
        if (!values.run?.[0]) throw new UsageError('--run is required');
        if (!values.taxonomy || !values.classes) throw new UsageError('--taxonomy and --classes are required');
        const severity = (values.severity ?? 'major') as Severity;
        if (!SEVERITIES.includes(severity)) throw new UsageError(`--severity must be one of ${SEVERITIES.join(', ')}`);
        const common = {
          taxonomy: findTaxonomy(catalog, values.taxonomy),
          classes: values.classes
            .split(',')
            .map((c) => c.trim())
            .filter(Boolean),
          severity,
          ...(values.note ? { note: values.note } : {}),
          annotator: values.annotator ?? annotatorId(io.env),
        };
        let r;
        if (values.steps) {
          const m = /^(\d+)(?:-(\d+))?$/.exec(values.steps);
          if (!m) throw new UsageError(`--steps must be N or A-B (1-based), got '${values.steps}'`);
          r = await tagSteps(ann, rs, {
            ...common,
            runId: values.run[0],
            from: Number(m[1]) - 1,
            to: Number(m[2] ?? m[1]) - 1,
          });
        } else if (values.span) {
          const m = /^(\d+)-(\d+)$/.exec(values.span);
          if (!m || !values.artefact || !values['text-file']) {
            throw new UsageError('--span START-END needs --artefact and --text-file');
          }
          r = await tagSpan(ann, rs, {
            ...common,
            runId: values.run[0],
            artefact: values.artefact,
            text: readFileSync(values['text-file'], 'utf8'),
            start: Number(m[1]),
            end: Number(m[2]),
          });
        } else throw new UsageError('give --steps or --span');
        io.out(
          values.json
            ? `${JSON.stringify({ item: r.item.id, annotation: r.annotation.id })}\n`
            : `tagged ${r.item.itemRef} (item ${r.item.id}) by ${annotatorLabel(r.annotation.annotator, r.annotation.dbRole ? [r.annotation.dbRole] : [])}\n`,
        );
        return 0;
      }
      case 'agreement': {
        if (!values.taxonomy) throw new UsageError('--taxonomy is required');
        const a = await failureTagAgreement(ann, rs, findTaxonomy(catalog, values.taxonomy), sel);
        if (values.json) io.out(JSON.stringify(a, null, 1) + '\n');
        else {
          printAgreement(io, a.steps);
          printAgreement(io, a.sentences);
        }
        return 0;
      }
      default:
        throw new UsageError(`unknown subcommand '${sub}' (taxonomies, queue, tag, agreement)`);
    }
  } finally {
    await rs.close();
  }
}

export const failuresCommand = defineCommand({
  name: 'failures',
  summary: 'failure-mode analysis: taxonomies, sampled failure / hallucination queues, tags, agreement per class',
  declarations: [DECL],
  run: failures,
});
