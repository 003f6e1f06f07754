/** `loupe results --matrix`: a benchmark's model × question matrix from the run store (issue 43). */
import {
  loadMatrix,
  MATRIX_FILTERS,
  matrixView,
  type MatrixDot,
  type MatrixRowFilter,
  type MatrixView,
} from '../app/matrix/matrix.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { EXPERIMENT_OPTIONS, JSON_OPTIONS } from './option-groups.ts';
import { runScope } from '../app/experiments/scope.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError } from './types.ts';

const DECL = declareCommand({
  synopsis: 'results --matrix --suite S',
  groups: [
    optionGroup('matrix', {
      matrix: {
        type: 'boolean',
        help: 'the model × question matrix: items as rows, run profiles as columns, one mark per repeat',
      },
      suite: { type: 'string', value: 'S', help: 'the benchmark whose runs are shown' },
      filter: { type: 'string', value: 'F', help: `rows to keep: ${MATRIX_FILTERS.join(', ')} (default all)` },
      profile: {
        type: 'string',
        value: 'PROFILE',
        multiple: true,
        help: 'only this run profile (agent · model · hash as listed); repeat for several',
      },
      run: {
        type: 'string',
        value: 'ID',
        multiple: true,
        help: 'only these runs (repeat for several; default every finished run of the suite)',
      },
      expected: { type: 'boolean', help: "show each item's expected value (ground truth) beside it" },
    }),
    EXPERIMENT_OPTIONS,
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  Columns are run profiles (agent + model + hash of behaviour parameters, the players of the pairwise ranking);
  repeats are numbered per profile and block. Marks: + right, ~ partial, x wrong, - unanswered, ? pending,
  . unscored (the run has no complete score: never counted), ! the run had a tool error (after the mark).
  --json: the matrix object of src/protocol/matrix.ts (expected values only with --expected).`,
});

const MARK: Record<MatrixDot['verdict'], string> = {
  right: '+',
  partial: '~',
  wrong: 'x',
  unanswered: '-',
  pending: '?',
  unscored: '.',
  missing: ' ',
};

/** The matrix as text: a legend of profiles, then one line per item (marks per profile, the question, the expected value). */
export function formatMatrix(v: MatrixView): string {
  const out: string[] = [
    `${oneLine(v.title)}: ${v.rows.length} of ${v.counts.all} items (filter ${v.filter}) × ${v.columns.length} profiles\n`,
  ];
  v.columns.forEach((c, i) =>
    out.push(
      `  P${i + 1} ${oneLine(c.player)} (${oneLine(c.label)}): ${c.runIds.length} runs${c.unscored.length ? `, ${c.unscored.length} unscored: ${c.unscored.map((x) => oneLine(x)).join(', ')}` : ''}; mean credit ${c.mean === null ? 'n/a' : c.mean.toFixed(3)}\n`,
    ),
  );
  if (v.judges.length > 1) {
    out.push(
      `  warning: the scores come from ${v.judges.length} judges/options: ${v.judges.map((x) => oneLine(x)).join(' | ')}\n`,
    );
  }
  for (const b of v.unscoredBlocks) {
    out.push(
      `  block ${oneLine(b.block)}: no scored run, items unknown (runs ${b.runIds.map((x) => oneLine(x)).join(', ')})\n`,
    );
  }
  const width = v.rows.reduce((w, r) => Math.max(w, r.key.length), 4);
  const colWidth = v.columns.map((_, i) => v.rows.reduce((w, r) => Math.max(w, r.cells[i]!.length * 2), 4));
  out.push(
    `${'item'.padEnd(width)}  ${v.columns.map((_, i) => `P${i + 1}`.padEnd(colWidth[i]!)).join(' ')}  question\n`,
  );
  for (const r of v.rows) {
    const cells = r.cells.map((c, i) =>
      c
        .map((d) => MARK[d.verdict] + (d.toolErrors ? '!' : ' '))
        .join('')
        .padEnd(colWidth[i]!),
    );
    out.push(
      `${oneLine(r.key).padEnd(width)}  ${cells.join(' ')}  ${oneLine(r.question)}${r.expected !== undefined ? `  [expected: ${oneLine(r.expected)}]` : ''}\n`,
    );
  }
  return out.join('');
}

export const resultsCommand = defineCommand({
  name: 'results',
  summary: "a benchmark's model × question matrix (--matrix): items × run profiles, repeats as marks",
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    if (!v.matrix) {
      throw new UsageError(
        'results prints the model × question matrix: give --matrix (the Results table is `loupe report`)',
      );
    }
    if (!v.suite) throw new UsageError('results --matrix needs --suite');
    const filter = (v.filter ?? 'all') as MatrixRowFilter;
    if (!MATRIX_FILTERS.includes(filter)) {
      throw new UsageError(`--filter must be one of ${MATRIX_FILTERS.join(', ')}, got '${v.filter}'`);
    }
    const store = await openExistingStore(io, v.store);
    try {
      // --run and --experiment narrow together: the runs named that are in the experiment
      const scope = await runScope(store, v.experiment);
      const named = v.run?.length ? v.run : null;
      const runs = scope.runIds ? (named ?? [...scope.runIds]).filter((id) => scope.includes(id)) : named;
      const m = await loadMatrix(store, { suite: v.suite, ...(runs ? { runs } : {}) });
      const view = matrixView(m, {
        filter,
        profiles: v.profile?.length ? v.profile : null,
        blind: false,
        ...(v.expected ? { reveal: 'all' as const } : {}),
      });
      io.out(v.json ? JSON.stringify(view) + '\n' : formatMatrix(view));
      return 0;
    } finally {
      await store.close();
    }
  },
});
