/**
 * The `reference` agent: a deterministic "model" that drives the same loop, tools, kernel and store
 * as an LLM. Step 1 runs the block's reference analysis script (`benchmarks/<suite>/reference/<block-id>.py`,
 * computing from the microdata) with the `python` tool; the script prints a JSON object
 * `{ "<q_id>": number | number[] }` on its last stdout line. Step 2 records every value through the
 * `answer` tool; step 3 calls `final_answer`. Typing answers in is not possible: they come from the
 * script's output. Keys may be LongTA q_ids, block item ids (`q1`) or item uids.
 * Source: issue 5 "Agents" (reference agent).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoupeInputError } from '../../util/errors.ts';
import type { Block } from '../../suites/types.ts';
import type { LongdaQuery } from './items.ts';
import { LlmError, type CompleteOptions, type LlmResponse, type LlmToolSpec } from '../../agent/llm.ts';
import type { ModelClient } from '../../agent/loop.ts';
import type { AssistantMessage, ChatMessage } from '../../agent/types.ts';

/**
 * Finds the reference script of a block: `<dir>/<block.id>.py`.
 * @throws LoupeInputError naming the path looked at when there is none.
 */
export function findReferenceScript(dir: string, block: Block): string {
  const p = join(dir, `${block.id}.py`);
  if (!existsSync(p)) {
    throw new LoupeInputError(
      p,
      `no reference script for block ${block.id} (the reference agent needs ${block.id}.py in ${dir})`,
    );
  }
  return p;
}

/**
 * Extracts the answers object from the script's output: the last line that parses as a JSON object.
 * @returns q_id → value, or undefined.
 */
export function parseReferenceOutput(text: string): Record<string, unknown> | undefined {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .reverse();
  for (const l of lines) {
    if (!l.startsWith('{')) continue;
    try {
      const v = JSON.parse(l) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      /* not JSON */
    }
  }
  return undefined;
}

const zero = { input: 0, output: 0, cached: 0 };

/** {@link ModelClient} that plays the reference script through the tools. */
export class ReferenceModel implements ModelClient {
  readonly model = 'reference';
  private readonly block: Block;
  private readonly script: string;

  constructor(block: Block, scriptPath: string) {
    this.block = block;
    this.script = scriptPath;
  }

  async complete(messages: ChatMessage[], _tools: LlmToolSpec[], _opts?: CompleteOptions): Promise<LlmResponse> {
    const t0 = performance.now();
    const turn = messages.filter((m) => m.role === 'assistant').length;
    const reply = (message: AssistantMessage): LlmResponse => ({
      message,
      usage: zero,
      costUsd: null,
      finishReason: 'tool_calls',
      latencyMs: performance.now() - t0,
      attempts: 1,
    });
    const callMsg = (content: string, calls: { name: string; args: Record<string, unknown> }[]): AssistantMessage => ({
      role: 'assistant',
      content,
      tool_calls: calls.map((c, i) => ({
        id: `ref_${turn}_${i}`,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    });
    if (turn === 0) {
      const code = readFileSync(this.script, 'utf8');
      return reply(callMsg(`Running the reference analysis ${this.script}.`, [{ name: 'python', args: { code } }]));
    }
    if (turn === 1) {
      const obs = [...messages].reverse().find((m) => m.role === 'tool')?.content ?? '';
      const out = parseReferenceOutput(obs);
      if (!out) {
        throw new LlmError(
          'protocol',
          `reference script ${this.script} printed no JSON object on its last line. Output:\n${obs.slice(-2000)}`,
        );
      }
      const qs = this.block.items.filter((i): i is LongdaQuery => i.type === 'longda-query');
      const calls: { name: string; args: Record<string, unknown> }[] = [];
      for (const [k, v] of Object.entries(out)) {
        const q = qs.find((x) => x.longdaId === k || x.id === k || x.uid === k);
        if (!q) throw new LlmError('protocol', `reference script ${this.script} answered unknown query '${k}'`);
        calls.push({ name: 'answer', args: { action: 'add', q_id: q.longdaId, answer: v } });
      }
      return reply(callMsg(`Recording ${calls.length} answers computed by the reference script.`, calls));
    }
    return reply(
      callMsg('Reference answers recorded.', [{ name: 'final_answer', args: { summary: 'reference analysis' } }]),
    );
  }
}
