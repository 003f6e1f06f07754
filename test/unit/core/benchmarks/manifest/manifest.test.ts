/**
 * Issue 44: a benchmark is a folder with a manifest. The manifest is validated against the shipped JSON Schema with
 * errors naming file, line and field; DABench is such a folder (`benchmarks/dabench/`, no TypeScript) reached through
 * the registry like every built-in; its blocks are the table files and the agent's task shows constraints and format.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseManifest, readManifest } from '../../../../../src/core/benchmarks/manifest/manifest.ts';
import { manifestBenchmarkAt } from '../../../../../src/core/benchmarks/manifest/define.ts';
import { pyFloat, pyRound, extractNamed, scoreItem } from '../../../../../src/core/benchmarks/manifest/eval.ts';
import { getBenchmark } from '../../../../../src/core/benchmarks/registry.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';

const MINIMAL = `kind: tiny
title: Tiny
items:
  file: q.jsonl
  id: id
  instruction: question
gold:
  file: q.jsonl
  id: id
  answer: answer
scoring:
  scorer: exact
`;

describe('benchmark manifest: schema errors name file, line and field', () => {
  it('a wrong enum value names its line and field and the allowed values', () => {
    const bad = MINIMAL.replace('scorer: exact', 'scorer: fuzzy');
    assert.throws(
      () => parseManifest(bad, 'b/loupe-benchmark.yaml'),
      (e: unknown) =>
        e instanceof LoupeInputError &&
        e.subject === 'b/loupe-benchmark.yaml:12' &&
        /scoring\.scorer: must be one of "exact", "numeric-tolerance"/.test(e.message),
    );
  });
  it('an unknown field and a missing one are both reported, each on its line', () => {
    const bad = MINIMAL.replace('  instruction: question\n', '  instrucion: question\n');
    assert.throws(
      () => parseManifest(bad, 'm.yaml'),
      (e: unknown) =>
        e instanceof LoupeInputError &&
        /m\.yaml:4: items: missing required field 'instruction'/.test(e.message) &&
        /m\.yaml:6: items\.instrucion: unknown field 'instrucion'/.test(e.message),
    );
  });
  it('JSON manifests get lines too; YAML syntax errors name their line', () => {
    const json = '{\n  "kind": "tiny",\n  "title": 3\n}';
    assert.throws(
      () => parseManifest(json, 'loupe-benchmark.json'),
      (e: unknown) => e instanceof LoupeInputError && /loupe-benchmark\.json:3: title: must be string/.test(e.message),
    );
    assert.throws(
      () => parseManifest('kind: [a\ntitle: x', 'x.yaml'),
      (e: unknown) => e instanceof LoupeInputError && /^x\.yaml:\d+$/.test(e.subject),
    );
  });
  it('rules the schema cannot say: a regex with the wrong number of groups, a by-field on an undeclared field', () => {
    const re = MINIMAL.replace('scorer: exact', "scorer: regex-extract\n  pattern: '@(\\w+)'");
    assert.throws(
      () => parseManifest(re, 'r.yaml'),
      (e: unknown) =>
        e instanceof LoupeInputError &&
        e.subject === 'r.yaml:13' &&
        /scoring\.pattern: must have exactly two capturing groups/.test(e.message),
    );
    const by = MINIMAL + '  aggregations:\n    - { metric: lvl, kind: by-field, field: level }\n';
    assert.throws(
      () => parseManifest(by, 'a.yaml'),
      (e: unknown) =>
        e instanceof LoupeInputError &&
        /scoring\.aggregations\[0\]\.field: 'level' is not one of items\.metadata/.test(e.message),
    );
  });
  it('a folder without a manifest is named', () => {
    const d = mkdtempSync(join(tmpdir(), 'loupe-nomanifest-'));
    assert.throws(
      () => readManifest(d),
      (e: unknown) => e instanceof LoupeInputError && e.subject === d && /no benchmark manifest/.test(e.message),
    );
    rmSync(d, { recursive: true });
  });
});

describe('a small manifest benchmark from scratch (exact scorer, one block per item)', () => {
  const d = mkdtempSync(join(tmpdir(), 'loupe-tiny-'));
  after(() => rmSync(d, { recursive: true, force: true }));
  it('loads items, keeps gold hidden and scores exact answers', async () => {
    mkdirSync(join(d, 'bench'));
    writeFileSync(join(d, 'bench', 'loupe-benchmark.yaml'), MINIMAL);
    writeFileSync(
      join(d, 'q.jsonl'),
      '{"id": "a", "question": "Capital of France?", "answer": "Paris"}\n{"id": "b", "question": "2+2?", "answer": 4}\n',
    );
    const def = manifestBenchmarkAt(join(d, 'bench'));
    const s = await def.load(d, {});
    assert.deepEqual(
      s.blocks.map((b) => b.id),
      ['a', 'b'],
    );
    assert.deepEqual((s.blocks[1]!.hidden as unknown as { gold: Record<string, unknown> }).gold, {
      b: { answers: [['answer', '4']] },
    });
    assert.ok(!def.taskText(s.blocks[0]!).join('\n').includes('Paris'));
  });
});

describe('Python semantics of the DABench scorer', () => {
  it('float(): whitespace, underscores, Unicode digits, inf/nan; refuses hex, commas, percent', () => {
    assert.equal(pyFloat(' 1_000.5\t'), 1000.5);
    assert.equal(pyFloat('٣٤.٦٥'), 34.65);
    assert.equal(pyFloat('-Infinity'), -Infinity);
    assert.ok(Number.isNaN(pyFloat('nan')));
    for (const s of ['0x10', '1,5', '5%', '', '1__0', '_1', '\ufeff1']) assert.equal(pyFloat(s), null, s);
  });
  it('round(x, 4) breaks exact ties to even, like CPython', () => {
    assert.equal(pyRound(1 / 32, 4), 0.0312);
    assert.equal(pyRound(3 / 32, 4), 0.0938);
    assert.equal(pyRound(2 / 3, 4), 0.6667);
    assert.equal(pyRound(0.7174, 4), 0.7174);
  });
  it('extract_format: . does not cross a newline; a repeated name keeps its last value', () => {
    assert.deepEqual([...extractNamed('@a[1] @b[x\ny] @a[2]', '@(\\w+)\\[(.*?)\\]')], [['a', '2']]);
    const r = scoreItem(
      '1',
      '@x[0.1000004] @y[2]',
      {
        answers: [
          ['x', '0.1'],
          ['y', '3'],
          ['z', '1'],
        ],
      },
      { scorer: 'regex-extract', pattern: '@(\\w+)\\[(.*?)\\]', compare: 'numeric-tolerance', absolute: 1e-6 },
      {},
    );
    assert.deepEqual(
      r.subs.map((s) => s.correct),
      [true, false, false],
    );
    assert.equal(r.correct, false);
  });
});

describe('InfiAgent-DABench is a shipped manifest folder (no TypeScript), one registry line', () => {
  it('benchmarks/dabench holds no TypeScript', () => {
    const files = readdirSync(join(repoRoot, 'benchmarks', 'dabench'), { recursive: true }) as string[];
    assert.ok(files.includes('loupe-benchmark.yaml'));
    assert.deepEqual(
      files.filter((f) => /\.(ts|js|mjs)$/.test(f)),
      [],
    );
  });
  it('loads 52 blocks, one per table file, 257 questions; the task shows constraints and format, never gold', async () => {
    const def = getBenchmark('dabench');
    assert.equal(def.clusterUnit, 'table file');
    const s = await loadSuite('dabench', sharedData('dabench'));
    assert.equal(s.blocks.length, 52);
    assert.equal(
      s.blocks.reduce((n, b) => n + b.items.length, 0),
      257,
    );
    const b = s.blocks.find((x) => x.id === 'test_ave.csv')!;
    assert.deepEqual(
      b.visible.data.map((f) => f.rel),
      ['data/test_ave.csv'],
    );
    const task = def.taskText(b).join('\n');
    assert.match(task, /Constraints: Calculate the mean fare using Python's built-in statistics module/);
    assert.match(task, /Answer format: @mean_fare\[mean_fare_value\]/);
    assert.ok(!task.includes('34.65'));
    assert.ok(b.hidden.files.some((f) => f.endsWith('da-dev-labels.jsonl')));
    assert.deepEqual(
      def.scoreOptions.map((o) => [o.name, o.presets]),
      [
        ['denominator', { official: 'answered', paper: 'all' }],
        ['round', undefined],
      ],
    );
  });
});
