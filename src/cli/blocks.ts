import { resolve } from 'node:path';
import { benchmarkOfFolder, getBenchmark } from '../core/benchmarks/registry.ts';
import { plural } from './plural.ts';
import { loadSuite, parseSuiteKind, summariseBlock } from '../core/benchmarks/index.ts';
import { UsageError } from './types.ts';
import { existsSync } from 'node:fs';
import { activeChecklistItems, checklistStoreOf } from '../core/annotations/checklists.ts';
import { STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { JSON_OPTIONS, loaderOptionGroup, loaderOptionsFromArgs, SUITE_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, parseCommand } from './options.ts';
import { openStoreAt } from '../core/store/open.ts';

const DECL = declareCommand({
  synopsis: 'blocks',
  groups: [SUITE_OPTIONS, STORE_OPTIONS, JSON_OPTIONS],
  dynamic: [loaderOptionGroup],
  notes:
    "  --root is required; --suite too unless the --root folder holds a benchmark manifest (loupe-benchmark.yaml or .json). DDR / AnalystBench: each block says its checklist (the newest version written with loupe checklist, else the suite's own) or that it has none.",
});

/** `loupe blocks`: lists the blocks of a benchmark suite on disk (issue 3 "CLI"). */
export const blocksCommand = defineCommand({
  name: 'blocks',
  summary: 'list the blocks of a benchmark suite (LongDA, BLADE, BLADE MCQ, DDR-Bench, AnalystBench-style) on disk',
  declarations: [DECL],
  async run(argv, io) {
    const { values, extra } = parseCommand(DECL, argv);
    if (!values.root) throw new UsageError('--root is required');
    const fromFolder = benchmarkOfFolder(resolve(io.cwd, values.root));
    if (fromFolder) values.root = resolve(io.cwd, values.root);
    if (!values.suite && !fromFolder) {
      throw new UsageError('--suite is required (or a --root folder holding loupe-benchmark.yaml)');
    }
    const kind = values.suite ? parseSuiteKind(values.suite) : fromFolder!.kind;
    const def = getBenchmark(kind);
    let lastPct = -1;
    const suite = await loadSuite(kind, values.root, {
      ...loaderOptionsFromArgs(extra, io.cwd, def),
      env: io.env,
      onProgress: (p) => {
        const pct = p.total ? Math.floor((100 * p.done) / p.total) : -1;
        if (pct !== lastPct && pct % 10 === 0) io.err(`${p.phase} ${pct}% ${p.message ?? ''}\n`);
        lastPct = pct;
      },
    });
    if (values.json) {
      io.out(JSON.stringify(suite.blocks.map(summariseBlock), null, 2) + '\n');
      for (const p of suite.problems) io.err(`problem: ${p}\n`);
      return 0;
    }
    // Checklists: the newest version written with `loupe checklist` / the editor (when a store exists), else the suite's own.
    const authored = new Map<string, { version: number; items: number }>();
    const loc = storeLocation(io, values.store);
    if (def.checklist && (loc.engine === 'postgres' || existsSync(loc.file))) {
      const store = await openStoreAt(loc, { env: io.env });
      try {
        for (const v of await checklistStoreOf(store).listLatest(suite.id)) {
          authored.set(v.blockId, { version: v.version, items: activeChecklistItems(v.items).length });
        }
      } finally {
        await store.close();
      }
    }
    const checklistText = (b: (typeof suite.blocks)[number]): string => {
      if (!def.checklist) return '';
      const a = authored.get(b.id);
      if (a) return `, ${plural(a.items, 'checklist item')} (authored version ${a.version})`;
      const n = def.checklist.nativeItems(b).length;
      return n
        ? `, ${plural(n, 'checklist item')}`
        : ', no checklist (runs of this block cannot be scored until one is written: loupe checklist save)';
    };
    const summaryText = (b: (typeof suite.blocks)[number]): string => {
      const t = def.blockSummary?.(b).text ?? '';
      return t ? `, ${t}` : '';
    };
    const runnable = suite.blocks.filter((b) => b.runnable).length;
    const items = suite.blocks.reduce((n, b) => n + b.items.length, 0);
    io.out(
      `${suite.title} (${suite.id}, version ${suite.version}): ${plural(suite.blocks.length, 'block')}, ${plural(items, 'item')}, ${runnable} runnable\n`,
    );
    const w = Math.max(2, ...suite.blocks.map((b) => b.id.length));
    for (const b of suite.blocks) {
      const extra = def.checklist ? checklistText(b) : summaryText(b);
      io.out(
        `${b.runnable ? '✔' : '✘'} ${b.id.padEnd(w)}  ${plural(b.items.length, 'item')}${extra}${b.problems.length ? `, ${b.problems.length} problem(s)` : ''}\n`,
      );
      for (const p of b.problems) io.out(`    - ${p}\n`);
    }
    for (const p of suite.problems) io.out(`problem: ${p}\n`);
    return 0;
  },
});
