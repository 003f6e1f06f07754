import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import {
  requireRunFolder,
  RunFolderRefusedError,
  runIdSegment,
  storedRelPath,
  trustedRunFolder,
} from '../../../../src/core/store/run-folder.ts';

let dir = '';
let root = '';
const run = (storedWorkspace: string) => ({ id: 'r1', storedWorkspace });

before(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'loupe-run-folder-')));
  root = join(dir, 'runs');
  mkdirSync(join(root, 'r1', 'workspace'), { recursive: true });
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('trustedRunFolder (issue 36)', () => {
  it('accepts <runs folder>/<run>/<workspace>, by real path, also when the runs folder is given through a link', () => {
    const f = trustedRunFolder(run(join(root, 'r1', 'workspace')), root);
    assert.deepEqual(f, {
      runId: 'r1',
      workspace: join(root, 'r1', 'workspace'),
      runDir: join(root, 'r1'),
      refused: null,
      absent: null,
    });
    symlinkSync(root, join(dir, 'runs-link'));
    assert.equal(
      trustedRunFolder(run(join(dir, 'runs-link', 'r1', 'workspace')), join(dir, 'runs-link')).workspace,
      join(root, 'r1', 'workspace'),
    );
    assert.equal(
      trustedRunFolder(run(join(root, 'r1', 'workspace')), join(dir, 'runs-link')).workspace,
      join(root, 'r1', 'workspace'),
    );
  });

  it('refuses a folder outside, the runs folder itself, `..`, a relative path, a file, a link on the way and another owner', () => {
    const outside = join(dir, 'home');
    mkdirSync(join(outside, 'ws'), { recursive: true });
    const why = (ws: string) => trustedRunFolder(run(ws), root).refused ?? '';
    assert.match(why(join(outside, 'ws')), /outside the runs folder/);
    assert.match(why('/'), /outside the runs folder/);
    assert.match(why(join(root, 'r1')), /not a run's workspace/);
    assert.match(why(`${root}/r1/../../home/ws`), /outside the runs folder/);
    assert.match(why('runs/r1/workspace'), /not an absolute path/);
    assert.match(why(''), /not an absolute path/);
    writeFileSync(join(root, 'r1', 'file'), 'x');
    assert.match(why(join(root, 'r1', 'file')), /is not a folder/);
    mkdirSync(join(root, 'r2'));
    symlinkSync(join(outside, 'ws'), join(root, 'r2', 'workspace'));
    assert.match(why(join(root, 'r2', 'workspace')), /passes through the link/);
    symlinkSync(outside, join(root, 'r3'));
    assert.match(why(join(root, 'r3', 'ws')), /passes through the link/);
    if (process.getuid?.() === 0) {
      mkdirSync(join(root, 'r4', 'workspace'), { recursive: true });
      chownSync(join(root, 'r4'), 12345, 12345);
      assert.match(why(join(root, 'r4', 'workspace')), /owned by another user/);
    }
    for (const ws of [join(outside, 'ws'), join(root, 'r2', 'workspace')]) {
      assert.equal(trustedRunFolder(run(ws), root).workspace, null);
    }
  });

  it("a runs folder named runs (the CLI's, next to a SQLite store) trusts exactly <its parent>/<run id>/workspace (VS Code's layout), nothing else beside it", () => {
    mkdirSync(join(dir, 'r1', 'workspace'), { recursive: true });
    mkdirSync(join(dir, 'r2', 'workspace'), { recursive: true });
    mkdirSync(join(dir, 'r1', 'other'), { recursive: true });
    assert.equal(trustedRunFolder(run(join(dir, 'r1', 'workspace')), root).workspace, join(dir, 'r1', 'workspace'));
    // another run's folder, another shape, the store folder itself: refused
    assert.match(trustedRunFolder(run(join(dir, 'r2', 'workspace')), root).refused ?? '', /outside the runs folder/);
    assert.match(trustedRunFolder(run(join(dir, 'r1', 'other')), root).refused ?? '', /outside the runs folder/);
    assert.match(trustedRunFolder(run(join(dir, 'r1')), root).refused ?? '', /outside the runs folder/);
    // only for a runs folder named `runs`
    mkdirSync(join(dir, 'elsewhere'), { recursive: true });
    assert.match(
      trustedRunFolder(run(join(dir, 'r1', 'workspace')), join(dir, 'elsewhere')).refused ?? '',
      /outside the runs folder/,
    );
  });

  it("a workspace absent on this machine is not refused (another machine's run) and reads nothing; no runs folder reads nothing", () => {
    const f = trustedRunFolder(run(join(root, 'gone', 'workspace')), root);
    assert.deepEqual([f.workspace, f.refused, f.absent], [null, null, join(root, 'gone', 'workspace')]);
    assert.deepEqual(trustedRunFolder(run(join(root, 'r1', 'workspace')), null), {
      runId: 'r1',
      workspace: null,
      runDir: null,
      refused: null,
      absent: null,
    });
  });

  it('requireRunFolder throws naming the run and the reason', () => {
    assert.throws(
      () => requireRunFolder(run('/etc'), root, 'it is not resumed'),
      (e: unknown) =>
        e instanceof RunFolderRefusedError &&
        /run r1: workspace \/etc is outside the runs folder .*; it is not resumed/.test(e.message),
    );
    assert.deepEqual(requireRunFolder(run(join(root, 'new', 'workspace')), root, 'x', { allowAbsent: true }), {
      workspace: join(root, 'new', 'workspace'),
      runDir: join(root, 'new'),
    });
    assert.throws(
      () => requireRunFolder(run(join(root, 'new', 'workspace')), root, 'x'),
      /does not exist on this machine/,
    );
  });

  it('run ids and relative paths read from the store are plain names', () => {
    assert.equal(runIdSegment('20260101T000000-abcd1234'), '20260101T000000-abcd1234');
    for (const bad of ['..', '.', '../x', 'a/b', '', 'a\u0000b']) {
      assert.throws(() => runIdSegment(bad), /not a plain name/);
    }
    assert.equal(storedRelPath('./figures//a.png'), 'figures/a.png');
    for (const bad of ['../x', '/etc/passwd', 'a/../../b', 'a\\..\\b', '', 'a\u0000', 7]) {
      assert.equal(storedRelPath(bad), null);
    }
  });
});

describe("only trustedRunFolder reads a run's recorded workspace (ESLint, issue 36)", () => {
  it('reading RunRecord.storedWorkspace anywhere in src but run-folder.ts is an error', async () => {
    const repo = join(import.meta.dirname, '../../../..');
    const eslint = new ESLint({ cwd: repo });
    const ruleOf = async (rel: string) =>
      ((await eslint.calculateConfigForFile(join(repo, rel))) as { rules?: Record<string, unknown> }).rules?.[
        'no-restricted-properties'
      ];
    for (const f of [
      'src/core/runs/score-stored-run.ts',
      'src/core/benchmarks/analystbench/score.ts',
      'src/cli/score.ts',
      'src/vscode/run/run-commands.ts',
      'src/core/store/artefacts.ts',
    ]) {
      const rule = await ruleOf(f);
      assert.ok(
        Array.isArray(rule) && rule.some((x) => (x as { property?: string }).property === 'storedWorkspace'),
        `${f}: ${JSON.stringify(rule)}`,
      );
      const linter = new Linter({ configType: 'flat' });
      const code =
        "export const f = (r: { storedWorkspace: string }): string => r.storedWorkspace;\nexport const g = (r: { storedWorkspace: string }): string => { const { storedWorkspace } = r; return storedWorkspace; };\nexport const h = (r: { storedWorkspace: string }): string => r['storedWorkspace'];\n";
      const msgs = linter.verify(
        code,
        [
          {
            files: ['**/*.ts'],
            languageOptions: { parser: tseslint.parser },
            rules: { 'no-restricted-properties': rule as Linter.RuleEntry },
          },
        ],
        'x.ts',
      );
      assert.equal(msgs.filter((m) => m.ruleId === 'no-restricted-properties').length, 3, JSON.stringify(msgs));
    }
    assert.equal(await ruleOf('src/core/store/run-folder.ts'), undefined);
  });
});
