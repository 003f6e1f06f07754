import { mkdirSync, writeFileSync } from 'node:fs';
import { runIdSegment } from '../core/store/run-folder.ts';
import { join, resolve } from 'node:path';
import type { Suite } from '../core/benchmarks/index.ts';
import { getBenchmark } from '../core/benchmarks/registry.ts';
import type { ExportedRun } from '../core/benchmarks/types.ts';
import { reopenRun } from '../core/runs/reopen.ts';
import { isRunActive } from '../core/store/run-store.ts';
import { openExistingStore, runsRootOf, STORE_OPTIONS, storeName } from './store-arg.ts';
import { exportTrajectoryJsonl } from '../core/store/export.ts';
import { UsageError } from './types.ts';
import { sweepProgressOf, type SweepProgress } from '../core/runs/sweep.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { EXPERIMENT_OPTIONS, JSON_OPTIONS } from './option-groups.ts';
import { changeLabels, filterRuns } from './runs-labels.ts';
import { experimentStoreOf } from '../core/store/experiments.ts';
import { runScope, scopeRuns } from '../app/experiments/scope.ts';
import { labelledRun } from '../app/experiments/filters.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { forkDiff, forkDiffLines } from '../app/runs/fork-diff.ts';
import { LoupeInputError } from '../core/util/errors.ts';

/** A sweep's progress as a table: one line per model, then the totals. */
export function formatSweepProgress(p: SweepProgress): string {
  const rows = [
    ['model', 'units', 'done', 'running', 'failed', 'queued'],
    ...[...p.models, p.total].map((m) => [m.model, m.total, m.done, m.running, m.failed, m.queued].map(String)),
  ];
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const t = p.total;
  return (
    `sweep ${p.sweepId}: ${t.done}/${t.total} done, ${t.running} running, ${t.failed} failed, ${t.queued} queued\n` +
    rows.map((r) => r.map((c, i) => (i ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join('  ')).join('\n') +
    '\n'
  );
}

const DECL = declareCommand({
  synopsis: 'runs',
  positionals: true,
  groups: [
    optionGroup('selection', {
      suite: { type: 'string', value: 'S', help: 'only runs of this benchmark' },
      block: { type: 'string', value: 'ID', help: 'only runs of this block' },
      status: { type: 'string', value: 'S', help: 'only runs in this status' },
      limit: { type: 'string', value: 'N', help: 'at most N runs (newest first)' },
      run: { type: 'string', value: 'RUN,RUN', help: 'exactly these runs' },
      sweep: {
        type: 'string',
        value: 'ID',
        help: "a sweep's progress (loupe run ... --queue): units done / running / failed / queued per model",
      },
      filter: {
        type: 'string',
        value: 'NAME',
        help: 'only runs a saved filter keeps, or a built-in one: tool-error, unscored, pending-for-me',
      },
    }),
    EXPERIMENT_OPTIONS,
    optionGroup('experiments', {
      tag: { type: 'string', value: 'RUN', help: 'tag the run with the LABEL given after it (an experiment is a tag)' },
      untag: { type: 'string', value: 'RUN', help: 'remove the LABEL given after it from the run' },
      rename: {
        type: 'string',
        value: 'RUN',
        help: 'name the run with the NAME given after it (none: clear the name)',
      },
      experiments: {
        type: 'boolean',
        help: 'list the experiments (tags) with their number of runs, and the saved filters',
      },
      'save-filter': {
        type: 'string',
        value: 'NAME',
        help: 'save --experiment / --suite / --status (and TEXT after it) as a filter',
      },
      'remove-filter': { type: 'string', value: 'NAME', help: 'remove a saved filter' },
      annotator: {
        type: 'string',
        value: 'NAME',
        help: 'who tags, renames or saves, and "me" of pending-for-me (default $LOUPE_ANNOTATOR, else git user.name, else the OS user)',
      },
    }),
    optionGroup('fork', {
      'fork-diff': {
        type: 'string',
        value: 'RUN',
        help: 'a forked run against its parent from the fork step: the hint, the steps after it, the code diff, answers and score',
      },
    }),
    optionGroup('exports', {
      trajectory: { type: 'string', value: 'DIR', help: 'write <runId>.jsonl for the selected runs' },
      results: {
        type: 'string',
        value: 'DIR',
        help: "write each benchmark's own results files for the selected runs (LongDA: answers_progress.csv, run_summary.json, ...; one run per block)",
      },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  Lists recorded runs (newest first). A run left 'running' by a killed process shows as 'running (stale)':
  continue it with loupe run --resume RUN.
  Experiments: loupe runs --tag RUN LABEL | --untag RUN LABEL | --rename RUN NAME; --experiment TAG lists (and
  exports) only the runs tagged TAG; --experiments lists the tags and saved filters. Tags, names and filters are
  kept in the store, append-only (who and when recorded).
  --fork-diff RUN --json: one object { parent, fork, forkStep, hints, steps, code, codeStats, answers, scores, metrics, notes }.
  --json: one line per run; with --sweep one object { sweepId, models: [{ model, total, done, running, failed, queued }], total }.`,
});

export const runsCommand = defineCommand({
  name: 'runs',
  summary: 'list recorded runs (stale ones marked), export trajectories (JSONL) or the LongDA results folder',
  declarations: [DECL],
  async run(argv, io) {
    const { values: v, positionals } = parseCommand(DECL, argv);
    const limit = v.limit ? Number(v.limit) : undefined;
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) {
      throw new UsageError(`--limit must be a positive integer, got '${v.limit}'`);
    }
    const storeFile = storeName(io, v.store);
    const store = await openExistingStore(io, v.store);
    try {
      const who = v.annotator ?? annotatorId(io.env);
      if (await changeLabels(store, v, positionals, who, io, storeFile)) return 0;
      if (positionals.length) {
        throw new UsageError(`unexpected '${positionals[0]}' (a LABEL or NAME follows --tag, --untag or --rename)`);
      }
      if (v.experiments) {
        const x = experimentStoreOf(store);
        const ex = await x.experiments();
        const fs = await x.filters();
        if (v.json) io.out(JSON.stringify({ experiments: ex, filters: fs }) + '\n');
        else {
          io.out(
            ex.length
              ? ex.map((e) => `${oneLine(e.tag)}  ${e.runs} run(s)\n`).join('')
              : `no experiments in ${storeFile} (tag runs: loupe runs --tag RUN LABEL)\n`,
          );
          for (const f of fs) {
            io.out(`filter ${oneLine(f.name)}: ${oneLine(JSON.stringify(f.spec))}  (saved by ${oneLine(f.author)})\n`);
          }
        }
        return 0;
      }
      if (v['fork-diff'] !== undefined) {
        if (v.run || v.trajectory || v.results || v.sweep !== undefined) {
          throw new UsageError(
            '--fork-diff compares one fork with its parent: not with --run, --sweep, --trajectory or --results',
          );
        }
        let d;
        try {
          d = await forkDiff(store, v['fork-diff']);
        } catch (e) {
          if (e instanceof LoupeInputError) throw new UsageError(`--fork-diff: ${e.message}`, { showUsage: false });
          throw e;
        }
        io.out(v.json ? JSON.stringify(d) + '\n' : forkDiffLines(d).join('\n') + '\n');
        return 0;
      }
      if (v.sweep !== undefined) {
        if (v.run || v.trajectory || v.results) {
          throw new UsageError("--sweep shows a sweep's progress: not with --run, --trajectory or --results");
        }
        const runs = await store.listRuns({ sweepId: v.sweep });
        if (!runs.length) {
          throw new UsageError(`--sweep: no unit of sweep '${v.sweep}' in ${storeFile}`, { showUsage: false });
        }
        const p = sweepProgressOf(v.sweep, runs);
        if (v.json) io.out(JSON.stringify(p) + '\n');
        else io.out(formatSweepProgress(p));
        return 0;
      }
      let runs = await store.listRuns({ suite: v.suite, blockId: v.block, status: v.status as never, limit });
      if (v.run) {
        const ids = v.run
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        for (const id of ids) {
          if (!(await store.getRun(id))) throw new UsageError(`--run: no run '${id}' in ${storeFile}`);
        }
        runs = [];
        for (const id of ids) runs.push((await store.getRun(id))!);
      }
      if (v.experiment !== undefined) {
        const scope = await runScope(store, v.experiment);
        if (!scope.runIds?.size) {
          throw new UsageError(`--experiment: no run is tagged '${v.experiment}' in ${storeFile}`, {
            showUsage: false,
          });
        }
        runs = scopeRuns(runs, scope);
      }
      if (v.filter !== undefined) runs = await filterRuns(store, runs, v.filter, who);
      const labels = await experimentStoreOf(store).labelsOf(runs.map((r) => r.id));
      if (v.trajectory) {
        const dir = resolve(io.cwd, v.trajectory);
        mkdirSync(dir, { recursive: true });
        for (const r of runs) {
          writeFileSync(join(dir, `${runIdSegment(r.id)}.jsonl`), await exportTrajectoryJsonl(store, r.id));
        }
        io.err(`trajectories: ${runs.length} file(s) in ${dir}\n`);
      }
      if (v.results) {
        // each benchmark writes its own results files; runs are reopened from the root recorded with them
        const suites = new Map<string, Promise<Suite>>();
        const byKind = new Map<string, ExportedRun[]>();
        for (const r of runs) {
          if (!r.params.suiteRoot) throw new UsageError(`run ${r.id} does not record its suite root`);
          const { block } = await reopenRun(r, { suites });
          byKind.set(r.suite, [...(byKind.get(r.suite) ?? []), { runId: r.id, block, repeat: r.params.repeat ?? 1 }]);
        }
        const out = resolve(io.cwd, v.results);
        for (const [kind, rs] of byKind) {
          const def = getBenchmark(kind);
          if (!def.exportResults) {
            io.err(`results: ${def.title} has no results files of its own (use --trajectory DIR)\n`);
            continue;
          }
          const files = await def.exportResults(
            store,
            rs,
            byKind.size > 1 ? join(out, kind) : out,
            runsRootOf(io, v.store),
          );
          io.err(
            `results: ${byKind.size > 1 ? join(out, kind) : out} (${def.title}: ${files.length} files, ${rs.length} runs)\n`,
          );
        }
      }
      if (v.json) {
        for (const r of runs) {
          io.out(
            JSON.stringify({
              ...r,
              active: isRunActive(r),
              answers: (await store.getAnswers(r.id)).length,
              name: labels.get(r.id)?.name ?? null,
              tags: labels.get(r.id)?.tags ?? [],
            }) + '\n',
          );
        }
      } else if (!v.trajectory && !v.results) {
        if (!runs.length) {
          io.out(`no runs in ${storeFile}${v.experiment !== undefined || v.filter !== undefined ? ' match' : ''}\n`);
        }
        for (const r of runs) {
          const st = r.status === 'running' && !isRunActive(r) ? 'running (stale)' : r.status;
          const l = labelledRun(labels.get(r.id), '');
          io.out(
            `${r.id}  ${r.suite}  ${oneLine(r.blockId)}  ${oneLine(r.agent)}${r.model && r.agent === 'llm' ? `:${oneLine(r.model)}` : ''}  ${st}  steps=${r.steps}  answers=${(await store.getAnswers(r.id)).length}  ${r.createdAt}${l.label ? `  “${oneLine(l.label)}”` : ''}${l.tags ? `  ${oneLine(l.tags)}` : ''}\n`,
          );
        }
      }
      return 0;
    } finally {
      await store.close();
    }
  },
});
