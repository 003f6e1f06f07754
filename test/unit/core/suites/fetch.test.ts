import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fetchSuite, mirrorUrl } from '../../../../src/core/suites/fetch.ts';
import { getSource } from '../../../../src/core/benchmarks/registry.ts';
import { loadSuite, type Progress } from '../../../../src/core/benchmarks/index.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { startMirror, type Mirror } from '../../../helpers/mirror.ts';
import { sharedData } from '../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-fetch-'));
let mirror: Mirror;
before(async () => {
  mirror = await startMirror();
});
after(async () => {
  await mirror.close();
  rmSync(tmp, { recursive: true, force: true });
});
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const HURRICANE_ANN = '/behavioral-data/BLADE/6118fa8d/blade_bench/datasets/hurricane/annotations.csv';

describe('suites/fetch against a local mirror of ../shared/data', () => {
  it('maps upstream URLs onto the mirror keeping the path', () => {
    assert.equal(
      mirrorUrl(
        'https://huggingface.co/datasets/EvilBench/LongDA/resolve/main/benchmark/benchmark.csv',
        'http://127.0.0.1:9/m/',
      ),
      'http://127.0.0.1:9/m/datasets/EvilBench/LongDA/resolve/main/benchmark/benchmark.csv',
    );
    assert.equal(mirrorUrl('https://x.org/a', undefined), 'https://x.org/a');
  });

  it('BLADE: downloads and verifies every mirrored file, reports the ones the mirror lacks, then loads', async () => {
    const dest = join(tmp, 'blade');
    const progress: Progress[] = [];
    const r = await fetchSuite(getSource('blade'), dest, { mirror: mirror.url, onProgress: (p) => progress.push(p) });
    const by = (s: string) => r.files.filter((f) => f.status === s).map((f) => f.dest);
    assert.equal(by('downloaded').length, 40);
    assert.ok(r.files.filter((f) => f.status === 'downloaded').every((f) => f.verified === 'sha256'));
    assert.deepEqual(by('missing').sort(), [
      'datasets/boxes/annotations.csv',
      'datasets/boxes/data.csv',
      'datasets/boxes/info.json',
      'datasets/boxes/mcq_dataset.json',
      'datasets/conversation/data.csv',
      'datasets/crofoot/annotations.csv',
      'datasets/crofoot/data.csv',
      'datasets/crofoot/info.json',
      'datasets/crofoot/mcq_dataset.json',
      'datasets/fish/annotations.csv',
      'datasets/fish/data.csv',
      'datasets/fish/info.json',
      'datasets/fish/mcq_dataset.json',
      'datasets/soccer/data.csv',
    ]);
    assert.equal(r.ok, false);
    assert.equal(
      sha(join(dest, 'datasets', 'hurricane', 'data.csv')),
      sha(sharedData('blade', 'datasets', 'hurricane', 'data.csv')),
    );
    assert.ok(progress.length > 40 && progress.at(-1)!.done === progress.at(-1)!.total);
    const s = await loadSuite('blade', r.loadRoot);
    assert.equal(s.blocks.length, 12);
    assert.equal(s.source.kind, 'fetched');
    assert.equal(s.version, '6118fa8d');
    assert.deepEqual(s.blocks.find((b) => b.id === 'hurricane')!.blade!.counts.cvars, {
      IV: 1,
      DV: 1,
      Control: 2,
      Moderator: 0,
      total: 4,
    });
    // second run: everything already present and verified, nothing requested again
    const before = mirror.requests.length;
    const r2 = await fetchSuite(getSource('blade'), dest, { mirror: mirror.url, only: ['datasets/hurricane/**'] });
    assert.deepEqual(
      r2.files.map((f) => f.status),
      ['present', 'present', 'present', 'present'],
    );
    assert.equal(mirror.requests.length, before);
    assert.equal(r2.ok, true);
  });

  it('resumes a partial file with an HTTP Range request', async () => {
    const dest = join(tmp, 'resume');
    const target = join(dest, 'datasets', 'hurricane', 'annotations.csv');
    mkdirSync(join(dest, 'datasets', 'hurricane'), { recursive: true });
    writeFileSync(
      `${target}.part`,
      readFileSync(sharedData('blade', 'datasets', 'hurricane', 'annotations.csv')).subarray(0, 1000),
    );
    const r = await fetchSuite(getSource('blade'), dest, {
      mirror: mirror.url,
      only: ['datasets/hurricane/annotations.csv'],
    });
    assert.equal(r.files[0]!.status, 'resumed');
    assert.deepEqual(mirror.requests.filter((q) => q.path === HURRICANE_ANN).at(-1), {
      path: HURRICANE_ANN,
      range: 'bytes=1000-',
    });
    assert.equal(sha(target), sha(sharedData('blade', 'datasets', 'hurricane', 'annotations.csv')));
    assert.ok(!existsSync(`${target}.part`));
  });

  it('an interrupted download (.part) is never listed as a benchmark file', async () => {
    const dest = join(tmp, 'partial-longda');
    const r = await fetchSuite(getSource('longda'), dest, {
      mirror: mirror.url,
      only: ['benchmark/benchmark.csv', 'benchmark/STC/docs/**'],
    });
    assert.equal(r.ok, true);
    mkdirSync(join(dest, 'benchmark', 'STC', 'data'), { recursive: true });
    writeFileSync(join(dest, 'benchmark', 'STC', 'data', 'STC_Historical_DB (2024).xlsx.part'), 'half a file');
    const s = await loadSuite('longda', r.loadRoot);
    const stc = s.blocks.find((b) => b.longda!.survey === 'STC')!;
    assert.deepEqual(stc.visible.data, []);
    assert.equal(stc.runnable, false);
  });

  it('resumes after the connection drops mid-file', async () => {
    const dest = join(tmp, 'drop');
    mirror.cutOnce.add(HURRICANE_ANN);
    const r = await fetchSuite(getSource('blade'), dest, {
      mirror: mirror.url,
      only: ['datasets/hurricane/annotations.csv'],
    });
    assert.equal(r.files[0]!.status, 'resumed');
    assert.equal(r.files[0]!.verified, 'sha256');
    assert.equal(
      sha(join(dest, 'datasets', 'hurricane', 'annotations.csv')),
      sha(sharedData('blade', 'datasets', 'hurricane', 'annotations.csv')),
    );
  });

  it('restarts from zero when the server ignores Range', async () => {
    const dest = join(tmp, 'norange');
    const target = join(dest, 'datasets', 'hurricane', 'annotations.csv');
    mkdirSync(join(dest, 'datasets', 'hurricane'), { recursive: true });
    writeFileSync(`${target}.part`, 'garbage that must not survive');
    mirror.ignoreRange = true;
    try {
      const r = await fetchSuite(getSource('blade'), dest, {
        mirror: mirror.url,
        only: ['datasets/hurricane/annotations.csv'],
      });
      assert.equal(r.files[0]!.status, 'downloaded');
    } finally {
      mirror.ignoreRange = false;
    }
    assert.equal(sha(target), sha(sharedData('blade', 'datasets', 'hurricane', 'annotations.csv')));
  });

  it('never uses a file that fails verification (wrong bytes from the server, or corrupted on disk)', async () => {
    const dest = join(tmp, 'corrupt');
    const p = '/behavioral-data/BLADE/6118fa8d/blade_bench/datasets/hurricane/data.csv';
    const good = readFileSync(sharedData('blade', 'datasets', 'hurricane', 'data.csv'));
    const bad = Buffer.from(good);
    bad[10] = bad[10]! ^ 1;
    mirror.corrupt.set(p, bad);
    try {
      const r = await fetchSuite(getSource('blade'), dest, {
        mirror: mirror.url,
        only: ['datasets/hurricane/data.csv'],
      });
      assert.equal(r.files[0]!.status, 'failed');
      assert.match(r.files[0]!.reason!, /sha256 .* does not match/);
      assert.equal(r.ok, false);
      assert.ok(!existsSync(join(dest, 'datasets', 'hurricane', 'data.csv')));
      assert.ok(!existsSync(join(dest, 'datasets', 'hurricane', 'data.csv.part')));
    } finally {
      mirror.corrupt.delete(p);
    }
    writeFileSync(join(dest, 'datasets', 'hurricane', 'data.csv'), 'tampered');
    const r2 = await fetchSuite(getSource('blade'), dest, {
      mirror: mirror.url,
      only: ['datasets/hurricane/data.csv'],
    });
    assert.equal(r2.files[0]!.status, 'downloaded');
    assert.equal(
      sha(join(dest, 'datasets', 'hurricane', 'data.csv')),
      sha(sharedData('blade', 'datasets', 'hurricane', 'data.csv')),
    );
  });

  it('LongDA: benchmark.csv, a survey and its publication land in the native layout, publications outside the survey', async () => {
    const dest = join(tmp, 'longda');
    const r = await fetchSuite(getSource('longda'), dest, {
      mirror: mirror.url,
      only: ['benchmark/benchmark.csv', 'benchmark/STC/**', 'publications/STC/**'],
    });
    assert.equal(r.ok, true);
    assert.equal(r.files.length, 1 + 7 + 1);
    const s = await loadSuite('longda', r.loadRoot);
    assert.equal(s.blocks.length, 27);
    const stc = s.blocks.find((b) => b.longda!.survey === 'STC')!;
    assert.equal(stc.runnable, true);
    assert.equal(stc.hidden.publication, join(dest, 'publications', 'STC', 'pubs', 'g20-stc.pdf'));
    assert.equal(s.source.kind, 'fetched');
  });

  it('DDR: checklists, entity ids and metadata from the GitHub layout', async () => {
    const dest = join(tmp, 'ddr');
    const r = await fetchSuite(getSource('ddr'), dest, { mirror: mirror.url });
    assert.equal(r.ok, true);
    assert.equal(r.files.length, 8);
    const s = await loadSuite('ddr', join(dest, 'mimic'));
    assert.equal(s.blocks.length, 100);
    assert.equal(
      s.blocks.reduce((n, b) => n + b.ddr!.checklistCount, 0),
      774,
    );
  });

  it('MIMIC-IV demo from the PhysioNet layout, checked against SHA256SUMS; chartevents is reported missing', async () => {
    const dest = join(tmp, 'mimic');
    const r = await fetchSuite(getSource('mimic-iv-demo'), dest, {
      mirror: mirror.url,
      only: ['hosp/patients.csv.gz', 'hosp/admissions.csv.gz', 'icu/chartevents.csv.gz'],
    });
    assert.deepEqual(
      r.files.map((f) => [f.dest, f.status]),
      [
        ['hosp/admissions.csv.gz', 'downloaded'],
        ['hosp/patients.csv.gz', 'downloaded'],
        ['icu/chartevents.csv.gz', 'missing'],
      ],
    );
    const s = await loadSuite('ddr', dest, { entities: 'patients.subject_id', database: join(tmp, 'mimic.sqlite') });
    assert.equal(s.blocks.length, 100);
  });

  it('rejects a bad mirror URL and an --only glob that matches nothing', async () => {
    await assert.rejects(
      fetchSuite(getSource('blade'), join(tmp, 'x'), { mirror: 'ftp://nope' }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === '--mirror',
    );
    await assert.rejects(
      fetchSuite(getSource('blade'), join(tmp, 'x'), { only: ['nothing/**'] }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === '--only',
    );
    // A survey glob without LongDA's benchmark/ prefix: the message shows the paths globs are matched against.
    await assert.rejects(
      fetchSuite(getSource('longda'), join(tmp, 'x'), { only: ['NHANES/**'] }),
      (e: unknown) => e instanceof LoupeInputError && /such as .*benchmark\/ASFIN\/\.\.\./.test(e.message),
    );
    assert.throws(() => getSource('nope'), LoupeInputError);
  });
});
