/**
 * Renders live agent events as a coloured terminal transcript (the VS Code "Loupe: <block>" terminal; the CLI's
 * verbose progress can use it too): thoughts, tool calls with arguments, observation summaries, tokens and
 * elapsed time. Source: issue 7 "Terminal".
 *
 * Everything an event carries from the model, the agent's tools or an MCP client (model text, tool names and
 * arguments, observations, reasons, log messages) goes through `neutraliseControls` first: only Loupe's own
 * colours reach the terminal, never an agent's ESC/CSI/OSC/DCS sequence, carriage return or bidi override
 * (issue 38).
 */
import { neutraliseControls } from '../util/text-safety.ts';
import type { AgentEvent } from './types.ts';

const ESC = '\x1b[';
const C = {
  dim: '2',
  bold: '1',
  red: '31',
  green: '32',
  yellow: '33',
  blue: '34',
  magenta: '35',
  cyan: '36',
  gray: '90',
} as const;

export interface TranscriptOptions {
  /** Emit ANSI colours (default true). */
  color?: boolean;
  /** Epoch ms the run started; elapsed time is shown relative to it. */
  startMs?: number;
  /** Longest argument / observation preview, characters (default 400 / 300). */
  maxArgChars?: number;
  maxObservationChars?: number;
  now?: () => number;
}

/**
 * Formats one event as zero or more terminal lines (CRLF-terminated, as a pseudoterminal expects).
 * `model-delta` events return the streamed text without a line break so tokens appear as they arrive.
 * @param e an {@link AgentEvent}; @param opts see {@link TranscriptOptions}.
 * @returns the text to write ('' for events not shown).
 */
export function formatAgentEvent(e: AgentEvent, opts: TranscriptOptions = {}): string {
  const color = opts.color ?? true;
  const paint = (code: string, s: string) => (color ? `${ESC}${code}m${s}${ESC}0m` : s);
  const now = (opts.now ?? Date.now)();
  const elapsed = opts.startMs !== undefined ? `${((now - opts.startMs) / 1000).toFixed(1)}s` : '';
  const stamp = elapsed ? paint(C.gray, `[${elapsed}] `) : '';
  // Agent-derived text: controls shown escaped (issue 38), then line breaks as the pseudoterminal expects.
  const nl = (s: string) => neutraliseControls(s).replace(/\n/g, '\r\n');
  const line = (s: string) => neutraliseControls(s, { keepNewlines: false });
  const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more chars)` : s);
  switch (e.type) {
    case 'step-start':
      return `\r\n${stamp}${paint(C.bold, `── step ${e.step + 1} ──`)}\r\n`;
    case 'model-delta':
      return e.reasoning ? paint(C.gray, nl(e.reasoning)) : e.content ? nl(e.content) : '';
    case 'tool-call': {
      let args = e.call.argumentsText;
      try {
        const parsed = JSON.parse(args) as Record<string, unknown>;
        if (typeof parsed.code === 'string') args = parsed.code;
        else args = JSON.stringify(parsed);
      } catch {
        /* shown as sent */
      }
      return `\r\n${stamp}${paint(C.cyan, `▶ ${line(e.call.name)}`)} ${nl(clip(args, opts.maxArgChars ?? 400))}\r\n`;
    }
    case 'observation': {
      const first = clip(e.observation.trim(), opts.maxObservationChars ?? 300);
      return `${paint(e.isError ? C.red : C.green, e.isError ? '  ✘ ' : '  ✔ ')}${paint(C.dim, nl(first))}\r\n`;
    }
    case 'step-end': {
      const r = e.record;
      const byTools = r.toolCalls
        .filter((c) => c.modelUse)
        .map((c) => `${c.modelUse!.usage.input} in / ${c.modelUse!.usage.output} out by ${line(c.name)}`);
      return `${stamp}${paint(C.gray, `${r.usage ? `tokens ${r.usage.input} in / ${r.usage.output} out${byTools.length ? ` (incl. ${byTools.join(', ')})` : ''}` : 'tokens unknown'} · model ${(r.latencyMs / 1000).toFixed(1)}s · tools ${(r.toolMs / 1000).toFixed(1)}s`)}\r\n`;
    }
    case 'retry':
      return `${stamp}${paint(C.yellow, `↻ retry ${e.attempt} in ${(e.delayMs / 1000).toFixed(1)}s: ${nl(e.reason)}`)}\r\n`;
    case 'paused':
      return `${stamp}${paint(C.yellow, `‖ paused before step ${e.step + 1} — press i to add a hint, r to resume, s to stop`)}\r\n`;
    case 'intervention':
      return `${stamp}${paint(C.blue, `✎ ${line(e.record.kind)} from ${line(e.record.who)} (sent before step ${e.step + 1}): ${nl(clip(e.record.text, opts.maxArgChars ?? 400))}`)}\r\n`;
    case 'resumed':
      return `${stamp}${paint(C.yellow, '▶ resumed')}\r\n`;
    case 'log':
      return `${stamp}${paint(C.magenta, `[${line(e.kind)}] ${nl(e.message)}`)}\r\n`;
    case 'run-end': {
      const ok = e.status === 'finished';
      return `\r\n${stamp}${paint(ok ? C.green : C.yellow, `■ run ${line(e.status)} after ${e.steps} steps: ${nl(e.reason)}`)}\r\n`;
    }
  }
}
