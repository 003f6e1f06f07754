/**
 * Child of `score-fifo.test.ts` (issue 36): an AnalystBench run whose workspace holds a FIFO named `report.md`, scored
 * with `loupe score` in this process. A FIFO opened for reading without O_NONBLOCK blocks the whole process (no timer
 * of the test runner could fire), so the parent runs this with a time limit. Prints the exit code, then stdout, then
 * stderr. Usage: node score-fifo.child.ts <temp dir>
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../src/core/benchmarks/index.ts';
import { writeAnalystbenchDemo } from '../../helpers/fixtures.ts';

const dir = process.argv[2]!;
const suite = writeAnalystbenchDemo(join(dir, 'suite'));
const block = (await loadSuite('analystbench', suite)).blocks[0]!;
const ws = join(dir, 'runs', 'ab1', 'workspace');
mkdirSync(ws, { recursive: true });
execFileSync('mkfifo', [join(ws, 'report.md')]);
const storeFile = join(dir, 'runs.sqlite');
const st = openStore(storeFile);
await st.createRun({
  id: 'ab1',
  suite: 'analystbench',
  blockId: block.id,
  agent: 'llm',
  model: 'writer',
  params: { suiteRoot: suite },
  promptHash: 'h',
  toolSet: 'analystbench-toc',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'bubblewrap',
  workspace: ws,
  status: 'finished',
});
await st.close();
const out: string[] = [];
const err: string[] = [];
const code = await main(['score', '--store', storeFile, '--run', 'ab1', '--judge', 'human', '--json'], {
  out: (s: string) => out.push(s),
  err: (s: string) => err.push(s),
  env: { ...process.env },
  cwd: dir,
});
process.stdout.write(`EXIT ${code}\n${out.join('')}\n---\n${err.join('')}\n`);
process.exit(0);
