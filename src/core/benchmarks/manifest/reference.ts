/**
 * The `reference` agent of a manifest benchmark: a deterministic "model" driving the same loop, kernel and tools as an
 * LLM. Step 1 runs the block's reference script (`<manifest folder>/<reference>/<block id>.py`) with the `python` tool;
 * the script computes the answers from the block's data and prints `{"<item id>": "<response>", ...}` as JSON on its
 * last stdout line. Step 2 records each response with the `answer` tool; step 3 calls `finish`. No answer is typed in:
 * they come from the script's output. Source: issue 44 (like LongDA's `reference.ts`, issue 5).
 */
import { readFileSync } from 'node:fs';
import type { Block } from '../../suites/types.ts';
import { LlmError, type CompleteOptions, type LlmResponse, type LlmToolSpec } from '../../agent/llm.ts';
import type { ModelClient } from '../../agent/loop.ts';
import type { AssistantMessage, ChatMessage } from '../../agent/types.ts';
import { parseReferenceOutput } from '../longda/reference.ts';

const zero = { input: 0, output: 0, cached: 0 };

/** {@link ModelClient} that plays a manifest block's reference script through the tools. */
export class ManifestReferenceModel implements ModelClient {
  readonly model = 'reference';
  private readonly block: Block;
  private readonly script: string;

  /** @param scriptPath the block's reference script (checked to exist by the caller). */
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
    const call = (content: string, calls: { name: string; args: Record<string, unknown> }[]): AssistantMessage => ({
      role: 'assistant',
      content,
      tool_calls: calls.map((c, i) => ({
        id: `ref_${turn}_${i}`,
        type: 'function',
        function: { name: c.name, arguments: JSON.stringify(c.args) },
      })),
    });
    if (turn === 0) {
      return reply(
        call(`Running the reference analysis ${this.script}.`, [
          { name: 'python', args: { code: readFileSync(this.script, 'utf8') } },
        ]),
      );
    }
    if (turn === 1) {
      const obs = [...messages].reverse().find((m) => m.role === 'tool')?.content ?? '';
      const out = parseReferenceOutput(typeof obs === 'string' ? obs : JSON.stringify(obs));
      if (!out) {
        throw new LlmError(
          'protocol',
          `reference script ${this.script} printed no JSON object on its last line. Output:\n${String(obs).slice(-2000)}`,
        );
      }
      const ids = new Set(this.block.items.map((i) => i.id));
      const calls = Object.entries(out).map(([k, v]) => {
        if (!ids.has(k)) {
          throw new LlmError(
            'protocol',
            `reference script ${this.script} answered unknown question '${k}' (block ${this.block.id} has ${[...ids].join(', ')})`,
          );
        }
        return { name: 'answer', args: { id: k, response: String(v) } };
      });
      return reply(call(`Recording ${calls.length} responses computed by the reference script.`, calls));
    }
    return reply(call('Reference responses recorded.', [{ name: 'finish', args: {} }]));
  }
}
