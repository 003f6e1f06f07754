/**
 * `loupe checklist` (show, versions, diff, save, export): expert-authored, versioned checklists of a block — the same
 * store and rules as the checklist editor in VS Code. The suite's own files are never edited: `export` writes the
 * native format (DDR `qa.json`, AnalystBench's checklist list). Source: issue 15.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  activeChecklistItems,
  authoredFromNative,
  ChecklistConflictError,
  checklistStoreOf,
  diffChecklists,
  type AuthoredChecklistItem,
  type ChecklistKey,
  type ChecklistVersion,
} from '../core/annotations/checklists.ts';
import { loadSuite, parseSuiteKind } from '../core/benchmarks/index.ts';
import { benchmarks, getBenchmark } from '../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../core/benchmarks/types.ts';
import type { RunStore } from '../core/store/run-store.ts';
import type { Block, Suite } from '../core/suites/types.ts';
import { annotatorId } from '../core/util/annotator.ts';
import { errorMessage, LoupeInputError } from '../core/util/errors.ts';
import { plural } from './plural.ts';
import { STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { openStoreAt } from '../core/store/open.ts';
import { UsageError, type CliIo } from './types.ts';
import { JSON_OPTIONS, SUITE_OPTIONS, loaderOptionGroup, loaderOptionsFromArgs } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'checklist <show|versions|diff|save|export>',
  groups: [
    SUITE_OPTIONS,
    optionGroup('checklist', {
      block: { type: 'string', value: 'ID', help: 'the block (required, with --suite and --root)' },
      version: {
        type: 'string',
        value: 'N|native',
        help: "the version shown or exported (default: newest authored, else the suite's)",
      },
      from: { type: 'string', value: 'N|native', help: 'diff: the older version' },
      to: { type: 'string', value: 'N', help: 'diff: the newer version' },
      base: {
        type: 'string',
        value: 'N|native',
        help: "save: the version you edited (a conflicting save shows the other expert's change and saves nothing)",
      },
      file: {
        type: 'string',
        value: 'ITEMS.json',
        help: 'save: a JSON list of items {id, kind: fact|criterion, question, answer, entity?, rubric? (five anchors), evidence?, retired?}',
      },
      author: {
        type: 'string',
        value: 'NAME',
        help: 'who saves (default $LOUPE_ANNOTATOR, else git user.name, else the OS user)',
      },
      note: { type: 'string', value: 'TEXT', help: 'a note with the version' },
      out: {
        type: 'string',
        value: 'FILE',
        help: "export: the benchmark's native checklist file (DDR qa.json; AnalystBench list)",
      },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  dynamic: [loaderOptionGroup],
  notes: `  show      the items a score would use
  versions  every authored version: author, time, note, hash, what changed
  diff      items added, changed, retired, restored between two versions
  save      a new version from --file
  export    the native checklist file of a version`,
});

const versionArg = (v: string | undefined, flag: string): number | 'native' | undefined => {
  if (v === undefined) return undefined;
  if (v === 'native') return 'native';
  if (!/^\d+$/.test(v) || Number(v) < 1) {
    throw new UsageError(`${flag} must be a version number (1, 2, ...) or native, got '${v}'`);
  }
  return Number(v);
};

/** The block's native items as authored items, or an authored version's. */
async function itemsOf(
  def: BenchmarkDefinition,
  block: Block,
  store: RunStore | undefined,
  key: ChecklistKey,
  v: number | 'native' | undefined,
): Promise<{ items: AuthoredChecklistItem[]; version?: ChecklistVersion }> {
  const native = () =>
    authoredFromNative(def.checklist!.nativeItems(block), def.checklist!.kind, def.checklist!.entityOf(block));
  if (v === 'native' || !store) {
    if (typeof v === 'number') {
      throw new LoupeInputError(
        `checklist version ${v}`,
        `block ${block.id} has no authored checklist (no run store yet)`,
      );
    }
    return { items: native() };
  }
  const cs = checklistStoreOf(store);
  const version = typeof v === 'number' ? await cs.get(key, v) : await cs.latest(key);
  if (typeof v === 'number' && !version) {
    const have = (await cs.versions(key)).map((x) => x.version);
    throw new LoupeInputError(
      `checklist version ${v}`,
      `block ${block.id} has ${have.length ? `versions ${have.join(', ')}` : 'no authored checklist'}`,
    );
  }
  return version ? { items: version.items, version } : { items: native() };
}

function printItems(io: CliIo, items: readonly AuthoredChecklistItem[]): void {
  for (const i of items) {
    io.out(
      `${i.retired ? '✘' : '•'} ${i.id} [${i.kind}${i.entity ? ` ${i.entity}` : ''}] ${i.question}${i.retired ? ' (retired)' : ''}\n`,
    );
    if (i.answer) io.out(`    answer: ${i.answer}\n`);
    if (i.rubric) i.rubric.forEach((r, k) => io.out(`    ${k + 1}: ${r}\n`));
    if (i.evidence?.sql) {
      io.out(
        `    evidence: ${i.evidence.sql}${i.evidence.result ? ` → ${plural(i.evidence.result.rowCount, 'row')}` : ''}\n`,
      );
    }
    if (i.evidence?.values) io.out(`    evidence: ${i.evidence.values}\n`);
    if (i.author !== 'native') io.out(`    by ${i.author} at ${i.updatedAt}\n`);
  }
}

async function checklist(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help') throw new UsageError('give a subcommand: show, versions, diff, save or export');
  const { values, extra } = parseCommand(DECL, rest);
  if (!['show', 'versions', 'diff', 'save', 'export'].includes(sub)) {
    throw new UsageError(`unknown subcommand '${sub}' (show, versions, diff, save, export)`);
  }
  if (!values.suite) throw new UsageError('--suite is required');
  if (!values.root) throw new UsageError('--root is required');
  if (!values.block) throw new UsageError('--block is required');
  const def = getBenchmark(parseSuiteKind(values.suite));
  if (!def.checklist) {
    throw new UsageError(
      `--suite ${def.kind}: ${def.title} has no checklists (suites with checklists: ${benchmarks()
        .filter((b) => b.checklist)
        .map((b) => b.kind)
        .join(', ')})`,
    );
  }
  const suite: Suite = await loadSuite(def.kind, values.root, {
    ...loaderOptionsFromArgs(extra, io.cwd, def),
    env: io.env,
  });
  const block = suite.blocks.find((b) => b.id === values.block);
  if (!block) {
    throw new UsageError(
      `--block ${values.block}: not a block of ${suite.id} (${suite.blocks
        .slice(0, 5)
        .map((b) => b.id)
        .join(', ')}${suite.blocks.length > 5 ? ', ...' : ''})`,
    );
  }
  const key: ChecklistKey = { suite: def.kind, suiteId: suite.id, blockId: block.id };
  const loc = storeLocation(io, values.store);
  const store =
    sub === 'save' || loc.engine === 'postgres' || existsSync(loc.file)
      ? await openStoreAt(loc, { env: io.env })
      : undefined;
  try {
    switch (sub) {
      case 'show': {
        const { items, version } = await itemsOf(def, block, store, key, versionArg(values.version, '--version'));
        if (values.json) {
          io.out(
            JSON.stringify(
              {
                block: block.id,
                suite: suite.id,
                source: version ? 'authored' : 'native',
                version: version?.version ?? null,
                hash: version?.hash ?? null,
                items,
              },
              null,
              2,
            ) + '\n',
          );
          return 0;
        }
        const active = activeChecklistItems(items).length;
        io.out(
          `${block.id}: ${version ? `authored version ${version.version} by ${version.author} (${version.createdAt})` : "the suite's own checklist"}, ${plural(active, 'item')}${items.length > active ? ` (+${items.length - active} retired)` : ''}\n`,
        );
        if (!items.length) {
          io.out(
            `  no checklist: runs of this block cannot be scored until one is written (loupe checklist save, or Edit Checklist in VS Code)\n`,
          );
        }
        printItems(io, items);
        return 0;
      }
      case 'versions': {
        const vs = store ? await checklistStoreOf(store).versions(key) : [];
        if (values.json) {
          io.out(
            JSON.stringify(
              vs.map((v, k) => ({
                version: v.version,
                parent: v.parent,
                author: v.author,
                createdAt: v.createdAt,
                note: v.note,
                hash: v.hash,
                items: activeChecklistItems(v.items).length,
                changes: diffChecklists(k ? vs[k - 1]!.items : [], v.items),
              })),
              null,
              2,
            ) + '\n',
          );
          return 0;
        }
        if (!vs.length) {
          io.out(
            `${block.id}: no authored checklist yet (scores use the suite's own, ${plural(def.checklist!.nativeItems(block).length, 'item')})\n`,
          );
        }
        vs.forEach((v, k) => {
          const d = diffChecklists(k ? vs[k - 1]!.items : [], v.items);
          const parts = [
            d.added.length && `+${d.added.length} added`,
            d.changed.length && `${d.changed.length} changed`,
            d.retired.length && `${d.retired.length} retired`,
            d.restored.length && `${d.restored.length} restored`,
          ].filter(Boolean);
          io.out(
            `v${v.version}  ${v.createdAt}  ${v.author}  ${plural(activeChecklistItems(v.items).length, 'item')}  ${parts.join(', ') || 'no change'}  ${v.hash.slice(0, 12)}${v.note ? `  "${v.note}"` : ''}\n`,
          );
        });
        return 0;
      }
      case 'diff': {
        const from = versionArg(values.from, '--from');
        const to = versionArg(values.to, '--to');
        if (from === undefined || to === undefined) {
          throw new UsageError('give --from and --to (version numbers or native)');
        }
        const a = await itemsOf(def, block, store, key, from);
        const b = await itemsOf(def, block, store, key, to);
        const d = diffChecklists(a.items, b.items);
        if (values.json) {
          io.out(JSON.stringify(d, null, 2) + '\n');
          return 0;
        }
        const byId = new Map(b.items.map((i) => [i.id, i]));
        const old = new Map(a.items.map((i) => [i.id, i]));
        for (const id of d.added) io.out(`+ ${id}: ${byId.get(id)?.question}\n`);
        for (const id of d.changed) {
          io.out(
            `~ ${id}: ${old.get(id)?.question} = ${old.get(id)?.answer}\n  → ${byId.get(id)?.question} = ${byId.get(id)?.answer}\n`,
          );
        }
        for (const id of d.retired) io.out(`- ${id}: ${old.get(id)?.question}\n`);
        for (const id of d.restored) io.out(`↺ ${id}: ${byId.get(id)?.question}\n`);
        if (!d.added.length && !d.changed.length && !d.retired.length && !d.restored.length) io.out('no change\n');
        return 0;
      }
      case 'save': {
        if (!values.file) throw new UsageError('save needs --file ITEMS.json (a JSON list of items)');
        let items: AuthoredChecklistItem[];
        try {
          items = JSON.parse(readFileSync(resolve(io.cwd, values.file), 'utf8')) as AuthoredChecklistItem[];
        } catch (e) {
          throw new LoupeInputError(values.file, `cannot read the items: ${errorMessage(e)}`);
        }
        if (!Array.isArray(items)) throw new LoupeInputError(values.file, 'expected a JSON list of items');
        const author = values.author ?? annotatorId(io.env);
        const entity = def.checklist.entityOf(block);
        const stamped = items.map((i) => ({
          ...i,
          kind: i.kind ?? def.checklist!.kind,
          ...(entity && !i.entity && (i.kind ?? def.checklist!.kind) === 'fact' ? { entity } : {}),
          author,
          updatedAt: new Date().toISOString(),
        }));
        const base = versionArg(values.base, '--base');
        const cs = checklistStoreOf(store!);
        try {
          const r = await cs.save(key, {
            base:
              typeof base === 'number' ? base : base === 'native' ? null : ((await cs.latest(key))?.version ?? null),
            items: stamped,
            author,
            ...(values.note ? { note: values.note } : {}),
          });
          io.out(
            r.created
              ? `saved ${block.id} checklist version ${r.version.version} (${plural(activeChecklistItems(r.version.items).length, 'item')}, ${r.version.hash.slice(0, 12)})\n`
              : `no change: version ${r.version.version} has the same items\n`,
          );
          return 0;
        } catch (e) {
          if (!(e instanceof ChecklistConflictError)) throw e;
          io.err(`loupe: ${e.message}\n`);
          for (const t of e.theirs) {
            io.err(
              t.item
                ? `  their ${t.id}: ${t.item.question} = ${t.item.answer}${t.item.retired ? ' (retired)' : ''} (by ${t.item.author})\n`
                : `  their ${t.id}: removed\n`,
            );
          }
          return 1;
        }
      }
      case 'export': {
        if (!values.out) throw new UsageError('export needs --out FILE');
        const { items, version } = await itemsOf(def, block, store, key, versionArg(values.version, '--version'));
        const active = activeChecklistItems(items);
        const out = def.checklist.exportNative(block, active, resolve(io.cwd, values.out));
        io.out(
          `wrote ${out}: ${plural(active.length, 'item')} of ${version ? `version ${version.version}` : "the suite's own checklist"}\n`,
        );
        return 0;
      }
    }
    return 0;
  } finally {
    await store?.close();
  }
}

export const checklistCommand = defineCommand({
  name: 'checklist',
  summary: 'author and version block checklists (DDR facts, AnalystBench criteria); export the native file',
  declarations: [DECL],
  run: checklist,
});
