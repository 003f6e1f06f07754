/**
 * Issue 40: every `loupe` command parses its arguments from one declaration of options (shared groups + its own), and
 * its usage text is generated from it. These tests hold every command to that: the usage lists exactly the options
 * the parser takes, every flag the usage text mentions exists, and no CLI file calls `parseArgs` on its own (a flag
 * parsed there would be undocumented). Loader flags come from each benchmark's `loadOptions` and resolve a path
 * against the working folder in every command (before, `--database` did so in `run`/`score` but not `blocks`/`mcp`).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import '../../fixtures/benchmarks/register.ts';
import { countRows } from '../../fixtures/benchmarks/count-rows/index.ts';
import { commands } from '../../../src/cli/commands.ts';
import { main } from '../../../src/cli/main.ts';
import {
  declareCommand,
  optionGroup,
  optionsOf,
  parseCommand,
  parseConfigOf,
  usageText,
  type CommandDeclaration,
} from '../../../src/cli/options.ts';
import { benchmarks, registerBenchmark } from '../../../src/core/benchmarks/registry.ts';
import type { LoadSuiteOptions } from '../../../src/core/suites/types.ts';
import { LoupeInputError } from '../../../src/core/util/errors.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

/** The flags in the option listing of a declaration's usage (lines `    --name VALUE   help` before the notes). */
function listedFlags(d: CommandDeclaration<unknown>): string[] {
  const usage = usageText(d);
  const listing = usage.slice(0, usage.length - d.notes().length);
  return listing
    .split('\n')
    .map((l) => /^ {4}(?:-\w, )?--([a-z0-9-]+)/.exec(l)?.[1])
    .filter((x): x is string => !!x);
}

/** The prose of a declaration's usage: its synopsis line and its notes. */
function proseLines(d: CommandDeclaration<unknown>): string[] {
  return [usageText(d).split('\n')[0]!, ...d.notes().split('\n')];
}

const declaredBy = (name: string): Set<string> =>
  new Set((commands.find((c) => c.name === name)?.declarations ?? []).flatMap((d) => Object.keys(optionsOf(d))));

describe('cli options: one declaration per command (issue 40)', () => {
  it("every command's usage lists exactly the options its parser takes, each once", () => {
    for (const c of commands) {
      assert.ok(c.declarations.length, `${c.name} declares its options`);
      for (const d of c.declarations) {
        const listed = listedFlags(d);
        const parsed = Object.keys(parseConfigOf(d));
        assert.deepEqual(
          [...listed].sort(),
          [...parsed].sort(),
          `loupe ${d.synopsis}: usage lists ${listed.join(', ')}; parser takes ${parsed.join(', ')}`,
        );
        assert.equal(new Set(listed).size, listed.length, `loupe ${d.synopsis} lists an option twice`);
        for (const [name, o] of Object.entries(optionsOf(d))) {
          assert.ok(o.help.trim(), `loupe ${d.synopsis} --${name} has help`);
          if (o.type === 'string') {
            assert.ok(o.value?.trim(), `loupe ${d.synopsis} --${name} says how its value is written`);
          }
        }
      }
      assert.ok(c.usage.startsWith(`loupe ${c.name}`), `${c.name}: usage starts with its name`);
    }
  });

  it('every flag the prose of a usage mentions is one of its options (or of the loupe command named on that line)', () => {
    for (const c of commands) {
      const own = declaredBy(c.name);
      for (const line of c.declarations.flatMap(proseLines)) {
        const others = [...line.matchAll(/loupe ([a-z0-9-]+)/g)].map((m) => m[1]!).filter((n) => n !== c.name);
        for (const m of line.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
          const flag = m[1]!;
          assert.ok(
            own.has(flag) || others.some((o) => declaredBy(o).has(flag)),
            `loupe ${c.name}: its usage mentions --${flag}, which it does not take: "${line.trim()}"`,
          );
        }
      }
    }
  });

  it('no CLI file parses arguments on its own: every flag goes through a declaration', () => {
    const dir = join(repoRoot, 'src', 'cli');
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && f !== 'options.ts')
      .filter((f) => /\bparseArgs\s*\(/.test(readFileSync(join(dir, f), 'utf8')));
    assert.deepEqual(
      offenders,
      [],
      'these files call node:util parseArgs directly instead of parseCommand(declaration)',
    );
  });

  it('parsing follows the declaration: a declared flag is taken and typed, an undeclared one refused; a name declared twice fails', () => {
    const d = declareCommand({
      synopsis: 'x',
      groups: [
        optionGroup('a', {
          n: { type: 'string', value: 'N', default: '3', help: 'n' },
          all: { type: 'boolean', short: 'a', help: 'all' },
        }),
      ],
    });
    const r = parseCommand(d, ['-a']);
    assert.equal(r.values.n, '3');
    assert.equal(r.values.all, true);
    assert.throws(
      () => parseCommand(d, ['--nope']),
      (e: NodeJS.ErrnoException) => e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION',
    );
    assert.match(usageText(d), /^loupe x \[options\]\n {2}a:\n {4}--n N +n \(default 3\)\n {4}-a, --all +all$/);
    assert.throws(
      () =>
        declareCommand({
          synopsis: 'y',
          groups: [
            optionGroup('a', { n: { type: 'boolean', help: 'n' } }),
            optionGroup('b', { n: { type: 'boolean', help: 'n again' } }),
          ],
        }),
      /--n is declared twice/,
    );
  });

  it('shared groups are declared once: --store and --json mean the same in every command that takes them', () => {
    const byName = new Map<string, string>();
    for (const c of commands) {
      for (const d of c.declarations as ReadonlyArray<CommandDeclaration<unknown>>) {
        for (const flag of ['store', 'json']) {
          const o = optionsOf(d)[flag];
          if (!o) continue;
          const sig = JSON.stringify(o);
          assert.equal(
            byName.get(flag) ?? sig,
            sig,
            `loupe ${d.synopsis}: --${flag} is declared apart from its shared group`,
          );
          byName.set(flag, sig);
        }
      }
    }
    assert.deepEqual([...byName.keys()].sort(), ['json', 'store']);
  });
});

describe("loader flags come from the benchmarks' loadOptions (issue 40)", () => {
  const tmp = mkdtempSync(join(tmpdir(), 'loupe-load-flags-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  // A test-only benchmark that records the loader options it is given, declaring a path option with DDR's flag.
  const seen: LoadSuiteOptions[] = [];
  registerBenchmark({
    ...countRows,
    kind: 'load-spy',
    title: 'Load Spy',
    importNativeOutputs: null,
    loadOptions: [{ name: 'database', key: 'database', type: 'path', value: 'FILE', help: 'a path the spy records' }],
    async load(_root, opts) {
      seen.push(opts);
      throw new LoupeInputError('load-spy', 'recorded');
    },
  });
  const call = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const rc = await main(argv, {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
      env: { ...process.env, LOUPE_NO_KEYS: '1' },
      cwd: tmp,
    });
    return { rc, out: out.join(''), err: err.join('') };
  };

  it("every command that loads a suite takes every benchmark's loader flags", () => {
    const flags = [...new Set(benchmarks().flatMap((b) => b.loadOptions.map((o) => o.name)))];
    assert.ok(flags.includes('database') && flags.includes('entities') && flags.includes('publications'));
    for (const name of ['run', 'score', 'blocks', 'mcp', 'checklist']) {
      const have = declaredBy(name);
      for (const f of flags) assert.ok(have.has(f), `loupe ${name} takes --${f}`);
    }
  });

  it('--database is resolved against the working folder in run, blocks and mcp alike (it was not in blocks and mcp)', async () => {
    mkdirSync(join(tmp, 'suite'), { recursive: true });
    const common = ['--suite', 'load-spy', '--root', join(tmp, 'suite'), '--database', 'rel.sqlite'];
    for (const argv of [
      ['blocks', ...common],
      ['mcp', ...common, '--block', 'b', '--sandbox', 'off', '--store', join(tmp, 's.sqlite')],
      [
        'run',
        ...common,
        '--blocks',
        'all',
        '--agent',
        'reference',
        '--sandbox',
        'off',
        '--store',
        join(tmp, 's.sqlite'),
      ],
    ]) {
      seen.length = 0;
      const r = await call(argv);
      assert.match(r.err, /load-spy: recorded/, `${argv[0]}: ${r.err}`);
      assert.equal(seen.length, 1, argv[0]);
      assert.equal(
        seen[0]!.database,
        join(tmp, 'rel.sqlite'),
        `loupe ${argv[0]} resolves --database against the working folder`,
      );
    }
  });

  it('a loader flag the chosen benchmark does not read is refused, naming the benchmarks that read it', async () => {
    const r = await call([
      'blocks',
      '--suite',
      'load-spy',
      '--root',
      join(tmp, 'suite'),
      '--entities',
      'patients.subject_id',
    ]);
    assert.equal(r.rc, 2);
    assert.match(r.err, /--entities applies to --suite ddr only/);
  });
});

describe('loupe score --native-outputs (issue 40)', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'loupe-native-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const root = join(repoRoot, 'test', 'fixtures', 'benchmarks', 'count-rows');
  const call = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const rc = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env: {}, cwd: tmp });
    return { rc, out: out.join(''), err: err.join('') };
  };

  it("scores the test-only count-rows benchmark's own output format, dispatched by --suite", async () => {
    const rows = (f: string) =>
      readFileSync(join(root, 'data', f), 'utf8')
        .trim()
        .split('\n').length - 1;
    writeFileSync(join(tmp, 'counts.csv'), `block,count\nseven,${rows('seven.csv')}\nsmall,${rows('small.csv') + 1}\n`);
    const j = await call([
      'score',
      '--native-outputs',
      'counts.csv',
      '--suite',
      'count-rows',
      '--root',
      root,
      '--json',
    ]);
    assert.equal(j.rc, 0, j.err);
    const r = JSON.parse(j.out) as {
      file: string;
      correct: number;
      blocks: Array<{ block: string; correct: boolean }>;
    };
    assert.equal(r.file, join(tmp, 'counts.csv'));
    assert.equal(r.correct, 0.5);
    assert.deepEqual(
      r.blocks.map((b) => [b.block, b.correct]),
      [
        ['seven', true],
        ['small', false],
      ],
    );
    const t = await call(['score', '--native-outputs', 'counts.csv', '--suite', 'count-rows', '--root', root]);
    assert.match(t.out, /counts\.csv: 1\/2 counts correct/);
  });

  it('asks for what the format needs, in the words of the flag used', async () => {
    const noSuite = await call(['score', '--native-outputs', 'counts.csv']);
    assert.equal(noSuite.rc, 2);
    assert.match(
      noSuite.err,
      /--native-outputs needs --suite S \(the benchmark that wrote them: longda, blade, ddr, dabench, count-rows\)/,
    );
    const noRoot = await call(['score', '--native-outputs', 'counts.csv', '--suite', 'count-rows']);
    assert.equal(noRoot.rc, 2);
    assert.match(noRoot.err, /--native-outputs needs --root DIR \(the count-rows suite the counts are of\)/);
    const none = await call(['score', '--native-outputs', 'x', '--suite', 'analystbench']);
    assert.equal(none.rc, 2);
    assert.match(none.err, /AnalystBench has no native-output format/);
    const qa = await call(['score', '--ddr-logs', 'logs']);
    assert.equal(qa.rc, 2);
    assert.match(qa.err, /--ddr-logs needs --qa FILE \(the scenario's qa\.json\)/);
    const bad = await call([
      'score',
      '--native-outputs',
      'counts.csv',
      '--suite',
      'count-rows',
      '--root',
      root,
      '--option',
      'x=1',
    ]);
    assert.equal(bad.rc, 1);
    assert.match(bad.err, /option x: not a Count Rows option/);
  });

  it('the old flags are aliases with identical output: --ddr-logs, --blade-outputs (and --longda-answers, same dispatch)', async () => {
    const parity = join(repoRoot, 'test', 'fixtures', 'official-parity');
    const inDir = async (cwd: string, argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const rc = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env: {}, cwd });
      return { rc, out: out.join(''), err: err.join('') };
    };
    for (const json of [['--json'], []]) {
      const ddrArgs = ['--qa', 'qa.json', '--judge', 'file:verdicts.jsonl', ...json];
      const old = await inDir(join(parity, 'ddr'), ['score', '--ddr-logs', 'logs', ...ddrArgs]);
      const now = await inDir(join(parity, 'ddr'), ['score', '--native-outputs', 'logs', '--suite', 'ddr', ...ddrArgs]);
      assert.equal(old.rc, 0, old.err);
      assert.deepEqual(now, old);
    }
    // BLADE scores in Python (slow): once, as JSON (the text lines come from the same result)
    const bladeArgs = ['--root', sharedData('blade', 'datasets'), '--judge', 'file:verdicts.jsonl', '--json'];
    const oldB = await inDir(join(parity, 'blade', 'run-folder'), [
      'score',
      '--blade-outputs',
      'hurricane',
      ...bladeArgs,
    ]);
    const nowB = await inDir(join(parity, 'blade', 'run-folder'), [
      'score',
      '--native-outputs',
      'hurricane',
      '--suite',
      'blade',
      ...bladeArgs,
    ]);
    assert.equal(oldB.rc, 0, oldB.err);
    assert.deepEqual(nowB, oldB);
    const both = await call(['score', '--ddr-logs', 'a', '--blade-outputs', 'b']);
    assert.equal(both.rc, 2);
    assert.match(both.err, /give one of --blade-outputs, --ddr-logs/);
  });

  it("is listed in loupe score --help with each benchmark's format and the old flags as aliases", async () => {
    const h = await call(['score', '--help']);
    for (const b of benchmarks().filter((x) => x.importNativeOutputs)) {
      assert.match(h.out, new RegExp(`--native-outputs PATH.* --suite ${b.kind}`));
    }
    for (const alias of ['longda-answers', 'ddr-logs', 'blade-outputs']) {
      assert.match(h.out, new RegExp(`--${alias} PATH`));
    }
  });
});
