/**
 * Issue 26 "Artefacts in the store": the files an agent wrote are kept in the store, content-addressed, bounded per
 * file and per run (what is skipped is named in a run event), links and inputs never stored; readers fall back to the
 * store's copy when the run folder is absent; deleting a run drops contents no other run holds. Both engines.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { captureRunArtefacts, mediaTypeOf, readRunFile } from '../../../../src/core/store/artefacts.ts';
import { trustedRunFolder } from '../../../../src/core/store/run-folder.ts';
import { pgPoolOf } from '../../../../src/core/store/pg-run-store.ts';
import { sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-artefacts-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

forEachEngine((e) => {
  it('a capture keeps what the agent wrote, smallest first within the bounds, and names every file it skipped', async () => {
    const s = await e.open(await e.fresh());
    const ws = join(dir, e.name, 'run-a', 'workspace');
    mkdirSync(join(ws, 'figures'), { recursive: true });
    mkdirSync(join(ws, 'data'), { recursive: true });
    writeFileSync(join(ws, 'report.md'), '# R\n'.repeat(10)); // 40 bytes
    writeFileSync(join(ws, 'figures', 'f.png'), Buffer.alloc(300, 7));
    writeFileSync(join(ws, 'figures', 'same.png'), Buffer.alloc(300, 7)); // same content: one blob
    writeFileSync(join(ws, 'dump.csv'), 'x'.repeat(5000)); // over the per-file cap
    writeFileSync(join(ws, 'big1.txt'), 'y'.repeat(900)); // fits the file cap, not what is left of the run cap
    writeFileSync(join(ws, 'data', 'input.csv'), 'a,b\n1,2\n'); // an input of the block
    writeFileSync(join(ws, 'empty'), ''); // a mount point
    symlinkSync('/etc/passwd', join(ws, 'planted.txt'));
    await s.createRun({
      id: 'run-a',
      suite: 'analystbench',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: { 'data/input.csv': 'x' },
      loupeVersion: 't',
      sandbox: 'off',
      workspace: ws,
    });
    const runA = (await s.getRun('run-a'))!;
    const c = await captureRunArtefacts(s, runA, trustedRunFolder(runA, join(dir, e.name)), {
      fileBytes: 1000,
      runBytes: 1200,
    });
    assert.deepEqual(c.stored, ['report.md', 'figures/f.png', 'figures/same.png']);
    assert.equal(c.bytes, 640);
    assert.deepEqual(c.skipped, [
      { path: 'big1.txt', size: 900, reason: 'run byte limit' },
      { path: 'dump.csv', size: 5000, reason: 'file too large' },
    ]);
    const warn = (await s.getEvents('run-a')).filter((ev) => ev.kind === 'warning').map((ev) => ev.message);
    assert.equal(warn.length, 1);
    assert.match(
      warn[0]!,
      /2 file\(s\) of the workspace not kept in the store .*big1\.txt \(900 bytes, run byte limit\), dump\.csv \(5000 bytes, file too large\)/,
    );
    const list = await s.artefacts.list('run-a');
    assert.deepEqual(
      list.map((a) => [a.path, a.mediaType, a.size]),
      [
        ['figures/f.png', 'image/png', 300],
        ['figures/same.png', 'image/png', 300],
        ['report.md', 'text/markdown', 40],
      ],
    );
    assert.equal(list[0]!.sha256, list[1]!.sha256);
    // the run folder gone (another machine): readers get the store's copy
    rmSync(ws, { recursive: true, force: true });
    assert.equal(
      await readRunFile(s, trustedRunFolder(runA, join(dir, e.name)), 'report.md', 'utf8'),
      '# R\n'.repeat(10),
    );
    await assert.rejects(readRunFile(s, trustedRunFolder(runA, join(dir, e.name)), 'dump.csv', 'utf8'), /no such file/);
    // file-count bound
    const ws2 = join(dir, e.name, 'run-b', 'workspace');
    mkdirSync(ws2, { recursive: true });
    for (let i = 0; i < 5; i++) writeFileSync(join(ws2, `n${i}.txt`), `${i}`);
    await s.createRun({
      id: 'run-b',
      suite: 'analystbench',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: ws2,
    });
    writeFileSync(join(ws2, 'f.png'), Buffer.alloc(300, 7)); // the content run-a holds
    const runB = (await s.getRun('run-b'))!;
    const c2 = await captureRunArtefacts(s, runB, trustedRunFolder(runB, join(dir, e.name)), { runFiles: 3 });
    assert.deepEqual(
      [c2.stored, c2.skipped.map((x) => x.reason)],
      [
        ['n0.txt', 'n1.txt', 'n2.txt'],
        ['run file limit', 'run file limit', 'run file limit'],
      ],
    );
    // deleting a run drops the contents only it held
    assert.equal(await s.deleteRun('run-b'), true);
    assert.deepEqual(await s.artefacts.list('run-b'), []);
    assert.equal((await readRunFile(s, trustedRunFolder(runA, join(dir, e.name)), 'figures/f.png', null)).length, 300);
    const blobs = async () =>
      e.name === 'sqlite'
        ? (sqliteHandleOf(s).prepare('SELECT COUNT(*) AS n FROM artefact_blobs').get() as { n: number }).n
        : Number((await pgPoolOf(s).query('SELECT COUNT(*) AS n FROM artefact_blobs')).rows[0].n);
    assert.equal(await blobs(), 2, "report.md and the shared figure (run-b's own texts are gone with it)");
    assert.equal(await s.deleteRun('run-a'), true);
    assert.equal(await blobs(), 0);
    await s.close();
  });
});

it('media types by extension', () => {
  assert.deepEqual(['a.md', 'F.PNG', 'x.bin', 'noext'].map(mediaTypeOf), [
    'text/markdown',
    'image/png',
    'application/octet-stream',
    'application/octet-stream',
  ]);
});
