/**
 * Issue 36 "no host-side code follows what an agent planted": for every registered benchmark (and the count-rows
 * fixture), every tool set it can build (each value of its enum and bool tool options), every workspace path any tool
 * set declares (`ToolSet.hostPaths`), and five plants — a link to a host file, a link to a host folder, a FIFO, a UNIX
 * socket, a hard link to a host file — the benchmark's tools are called, then artefact capture, review, scoring and
 * the results export of the run (`host-paths.child.ts`). Each case must end with the host folder unchanged (contents,
 * mtimes, no new files), not hang (the child process is watched: a case that prints nothing for a long time is
 * killed and counted as hung), and the tools that declare the path must say which path and why.
 * A tool without a line in CALLS fails the test: a new tool (or option value adding one) cannot go untested.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import '../../fixtures/benchmarks/register.ts';
import { benchmarks } from '../../../src/core/benchmarks/registry.ts';
import { parseToolOptions } from '../../../src/core/runs/runner.ts';
import type { Block } from '../../../src/core/suites/types.ts';
import type { HostPath, ToolSet } from '../../../src/core/agent/types.ts';
import type { HostPathCase, HostPathResult } from './host-paths.child.ts';

/**
 * How each tool is called, by name (every tool of every tool set must have a line). Tools that touch workspace paths
 * are called the way an agent finishing its work would; the others once with plausible arguments (they may fail:
 * there is no kernel, documentation or database here; what counts is that the host is untouched and nothing hangs).
 */
const CALLS: Record<string, Array<Record<string, unknown>>> = {
  // AnalystBench
  list_files: [{ glob: '**' }],
  read_doc: [{ doc_path: 'report.md' }],
  search_doc: [{ keyword: 'HOST' }],
  retriever: [{ query: 'host secret' }],
  python: [{ code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2])' }],
  write_report: [
    { markdown: '# Report\n\n![Figure 1](figures/fig-0-1.png)\n' },
    { markdown: '# Report\n\nNo figures.\n' },
  ],
  // LongDA
  prompt: [{}],
  find_variables: [{ query: 'age' }],
  notes: [{ action: 'add', content: 'note' }],
  answer: [
    { query_id: 'q1', answer: 1 },
    { id: 'q1', response: '@a[1]' },
  ],
  save_code: [{ code: 'print(1)' }],
  final_answer: [{}],
  // BLADE
  submit_analysis: [
    {
      conceptual_variables: [],
      transform_code: 'def transform(df):\n    return df',
      model_code: 'def model(df):\n    return None',
    },
  ],
  // DDR
  get_database_info: [{}],
  describe_table: [{ table_name: 'report.md' }],
  execute_query: [{ query: 'SELECT 1' }],
  // manifest benchmarks (DABench)
  finish: [{}],
  // count-rows fixture
  submit_count: [{ count: 1 }],
};

const PLANTS: HostPathCase['plant'][] = [
  'link to a host file',
  'link to a host folder',
  'FIFO',
  'socket',
  'hard link to a host file',
];

const stubBlock = (suite: string): Block =>
  ({
    id: 'b1',
    suite,
    suiteId: `${suite}:containment`,
    title: 'containment',
    items: [],
    visible: { data: [], docs: [], missing: [], instruction: 'Write a report.', tableOfContents: '1. Intro' },
    hidden: { files: [] },
    runnable: true,
    problems: [],
  }) as unknown as Block;

/** Every tool set of a benchmark: default options, then each value of each enum / bool tool option. */
function toolSetsOf(
  kind: string,
  toolOptions: ReadonlyArray<{ name: string; type: string; values?: readonly string[] }>,
): Array<{ options: Record<string, string>; ts: ToolSet }> {
  const variants: Array<Record<string, string>> = [{}];
  for (const o of toolOptions) {
    if (o.type === 'enum') for (const v of o.values ?? []) variants.push({ [o.name]: v });
    if (o.type === 'bool') variants.push({ [o.name]: 'true' }, { [o.name]: 'false' });
  }
  const out: Array<{ options: Record<string, string>; ts: ToolSet }> = [];
  const def = benchmarks().find((b) => b.kind === kind)!;
  const keys = new Set<string>();
  for (const options of variants) {
    try {
      const ts = def.toolSet({ block: stubBlock(kind), agent: 'llm', options: parseToolOptions(kind, options) });
      // tool sets with the same tools and declared paths are driven once
      const key = JSON.stringify([ts.tools.map((t) => t.name), ts.hostPaths]);
      if (keys.has(key)) continue;
      keys.add(key);
      out.push({ options, ts });
    } catch {
      /* an option value that needs more than this block (a template file): its tools are those of another variant */
    }
  }
  return out;
}

/** Builds the cases: benchmark × distinct tool set × declared path × plant. */
function buildCases(): { cases: HostPathCase[]; missingTools: string[]; declared: HostPath[]; toolsSeen: string[] } {
  const all = benchmarks().map((def) => ({ def, sets: toolSetsOf(def.kind, def.toolOptions) }));
  const declared = new Map<string, HostPath>();
  const missing = new Set<string>();
  const seen = new Set<string>();
  for (const { def, sets } of all) {
    for (const { ts } of sets) {
      for (const h of ts.hostPaths) declared.set(h.example, h);
      for (const t of ts.tools) {
        seen.add(`${def.kind}/${t.name}`);
        if (!CALLS[t.name]) missing.add(`${def.kind}/${t.name}`);
      }
      for (const h of ts.hostPaths) {
        for (const n of h.tools) {
          if (!ts.tools.some((t) => t.name === n)) {
            missing.add(`${def.kind}/${n} (declared for ${h.path}, not a tool of ${ts.id})`);
          }
        }
      }
    }
  }
  const cases: HostPathCase[] = [];
  for (const { def, sets } of all) {
    for (const { options, ts } of sets) {
      // every declared path of every tool set is planted in every benchmark's workspace: its scoring, review, export
      // and capture must hold too; the tool set's own tools that declare the path must name it
      for (const h of declared.values()) {
        for (const plant of PLANTS) {
          const own = ts.hostPaths.find((x) => x.example === h.example);
          cases.push({
            benchmark: def.kind,
            toolOptions: options,
            path: h.example,
            plant,
            calls: CALLS,
            declaredBy: own ? own.tools.filter((n) => ts.tools.some((t) => t.name === n)) : [],
          });
        }
      }
    }
  }
  return { cases, missingTools: [...missing].sort(), declared: [...declared.values()], toolsSeen: [...seen].sort() };
}

/** Runs the cases in child processes; a case silent for `hangMs` is killed and reported as hung. */
async function runCases(
  cases: HostPathCase[],
  hangMs: number,
): Promise<{ results: Map<number, HostPathResult>; hung: number[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-host-paths-cases-'));
  const file = join(dir, 'cases.json');
  writeFileSync(file, JSON.stringify(cases));
  const results = new Map<number, HostPathResult>();
  const hung: number[] = [];
  let next = 0;
  try {
    while (next < cases.length) {
      const child = spawn(process.execPath, [join(import.meta.dirname, 'host-paths.child.ts'), file, String(next)], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
      });
      let current = -1;
      let buf = '';
      let stderr = '';
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => child.kill('SIGKILL'), hangMs);
      };
      arm();
      child.stderr.on('data', (d) => {
        stderr = (stderr + String(d)).slice(-4000);
      });
      child.stdout.on('data', (d) => {
        buf += String(d);
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.startsWith('START ')) {
            current = Number(line.slice(6));
            arm();
          } else if (line.startsWith('RESULT ')) {
            const r = JSON.parse(line.slice(7)) as HostPathResult;
            results.set(r.index, r);
            next = r.index + 1;
            current = -1;
          }
        }
      });
      const code = await new Promise<number | null>((res) => child.on('close', (c) => res(c)));
      clearTimeout(timer);
      if (current >= 0) {
        hung.push(current); // started, never finished: killed (or crashed) in that case
        next = current + 1;
      } else if (next < cases.length && code !== 0) {
        throw new Error(`the case runner stopped (exit ${code}) after case ${next - 1}: ${stderr}`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { results, hung };
}

const REASON = /symbolic link|FIFO|socket|hard link|not a folder|not a file|Only regular files/;

test(
  "every path a tool set declares, planted with a link, FIFO, socket or hard link, is contained by every benchmark's tools, scoring, review, export and artefact capture",
  { timeout: 30 * 60_000 },
  async () => {
    const { cases, missingTools, declared, toolsSeen } = buildCases();
    assert.deepEqual(
      missingTools,
      [],
      `tools without a line in CALLS of host-paths.test.ts (add how to call them): ${missingTools.join(', ')}`,
    );
    assert.ok(declared.length >= 4, `declared host paths: ${declared.map((d) => d.path).join(', ')}`);
    assert.ok(toolsSeen.length >= 20, `tools: ${toolsSeen.join(', ')}`);
    const { results, hung } = await runCases(cases, 60_000);
    const problems: string[] = [];
    let contained = 0;
    for (const [i, c] of cases.entries()) {
      const what = `${c.benchmark}${Object.keys(c.toolOptions).length ? ` (${JSON.stringify(c.toolOptions)})` : ''}: ${c.plant} at ${c.path}`;
      if (hung.includes(i)) {
        problems.push(`${what}: hung (killed)`);
        continue;
      }
      const r = results.get(i);
      if (!r) {
        problems.push(`${what}: no result`);
        continue;
      }
      const bad: string[] = [];
      if (r.hostChanged.length) bad.push(`host changed: ${r.hostChanged.join(', ')}`);
      for (const tool of c.declaredBy) {
        const said = r.messages.filter((m) => m.startsWith(`${tool}: `));
        if (!said.some((m) => m.includes(c.path) && REASON.test(m))) {
          bad.push(`${tool} did not name ${c.path} and why: ${said.join(' | ').slice(0, 400)}`);
        }
      }
      if (bad.length) problems.push(`${what}: ${bad.join('; ')}`);
      else contained++;
    }
    console.log(
      `host-path containment: ${cases.length} planted cases (${declared.length} declared paths × ${PLANTS.length} plants × tool sets of ${new Set(cases.map((c) => c.benchmark)).size} benchmarks), ${contained} contained, ${hung.length} hung`,
    );
    assert.deepEqual(problems, []);
  },
);
