/**
 * The escape hatch of manifest scoring: a Python module named by the manifest (`scoring.scorer: python`,
 * `scoring.module: scorer.py`) scores the responses, run in the same bubblewrap sandbox as agent code (Loupe's
 * `PythonKernel`: every namespace unshared, so no network; the module's folder mounted read-only; nothing writable;
 * a time limit). The module defines `score(items)`: `items` is a list of `{"id", "response", "gold": [[name, value],
 * ...], "metadata"}` and it returns one entry per item, in order: `{name: bool}` per gold sub-answer, or one bool for
 * the whole item. Source: issue 44.
 */
import { dirname, resolve } from 'node:path';
import { PythonKernel } from '../../kernel/python-kernel.ts';
import { LoupeInputError } from '../../util/errors.ts';
import type { ItemResult } from './eval.ts';
import type { ManifestGold } from './items.ts';

const START = '<<<LOUPE_SCORE>>>';
const END = '<<<LOUPE_SCORE_END>>>';

/** One item to score. */
export interface PythonScorerInput {
  id: string;
  response: string;
  gold: ManifestGold;
  metadata: Record<string, unknown>;
}

/**
 * Scores items with the manifest's Python module in the sandbox.
 * @param module absolute path of the module; `timeoutSeconds` its time limit (whole call).
 * @returns one {@link ItemResult} per input, in order (an empty response is unanswered whatever the module says).
 * @throws LoupeInputError naming the module when it fails, times out, or returns something else than one entry per item.
 */
export async function scoreWithPython(
  module: string,
  items: readonly PythonScorerInput[],
  o: { timeoutSeconds: number; sandbox?: 'bubblewrap' | 'off'; python?: string },
): Promise<ItemResult[]> {
  const dir = dirname(resolve(module));
  const payload = items.map((i) => ({ id: i.id, response: i.response, gold: i.gold.answers, metadata: i.metadata }));
  const code = [
    'import json as __j, runpy as __r, sys as __s',
    `__ns = __r.run_path(${JSON.stringify(resolve(module))})`,
    `__out = __ns["score"](__j.loads(${JSON.stringify(JSON.stringify(payload))}))`,
    `__s.stdout.write(${JSON.stringify(START)} + __j.dumps(__out) + ${JSON.stringify(END)})`,
  ].join('\n');
  let kernel: PythonKernel;
  try {
    kernel = await PythonKernel.start({
      ...(o.python ? { python: o.python } : {}),
      cwd: dir,
      sandbox: o.sandbox ?? 'bubblewrap',
      readOnlyPaths: [dir],
      writablePaths: [],
      cellTimeoutMs: Math.round(o.timeoutSeconds * 1000),
      maxOutputChars: 50_000_000,
    });
  } catch (e) {
    throw new LoupeInputError(
      module,
      `cannot start the sandboxed Python for the scorer module (${(e as Error).message})`,
      { cause: e },
    );
  }
  try {
    const r = await kernel.execute(code);
    if (r.status !== 'ok') {
      throw new LoupeInputError(
        module,
        r.status === 'timeout'
          ? `the scorer module ran past its time limit (${o.timeoutSeconds} s)`
          : `the scorer module failed: ${r.error ? `${r.error.ename}: ${r.error.evalue}` : r.stderr.slice(-1000)}`,
      );
    }
    const a = r.stdout.lastIndexOf(START);
    const b = r.stdout.lastIndexOf(END);
    if (a < 0 || b < a) throw new LoupeInputError(module, 'score(items) returned nothing readable');
    const out = JSON.parse(r.stdout.slice(a + START.length, b)) as unknown;
    if (!Array.isArray(out) || out.length !== items.length) {
      throw new LoupeInputError(
        module,
        `score(items) must return a list of ${items.length} entries (one per item), got ${Array.isArray(out) ? `${out.length}` : typeof out}`,
      );
    }
    return items.map((it, k) => {
      const v = out[k] as unknown;
      const answered = it.response !== '';
      const names = it.gold.answers.map(([n]) => n);
      let ok: boolean[];
      if (typeof v === 'boolean') ok = names.map(() => v);
      else if (v && typeof v === 'object' && !Array.isArray(v)) {
        ok = names.map((n) => (v as Record<string, unknown>)[n] === true);
      } else {
        throw new LoupeInputError(
          module,
          `score(items)[${k}] (item ${it.id}) must be a bool or {name: bool}, got ${JSON.stringify(v)}`,
        );
      }
      const subs = it.gold.answers.map(([name, expected], i) => ({
        name,
        expected,
        given: answered ? it.response : null,
        correct: answered && ok[i]!,
      }));
      return {
        id: it.id,
        answered,
        response: it.response,
        subs,
        correct: answered && subs.every((s) => s.correct),
        metadata: it.metadata,
      };
    });
  } finally {
    await kernel.close();
  }
}
