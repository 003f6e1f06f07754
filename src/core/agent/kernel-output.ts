/**
 * Turning a kernel cell result into the text an agent sees, shared by the BLADE, DDR and
 * AnalystBench `python` tools, plus the "preamble once per kernel" helper they use.
 * Source: issue 6; spec §1.3.3 (BLADE observation = stdout / result text, errors keep the tail).
 */
import type { KernelExecuteResult, ToolContext, ToolResult } from './types.ts';

/**
 * Renders a kernel result as an observation: stdout, the final expression's repr, tables as text,
 * a figure count, stderr, the error with its traceback, and a note when the kernel restarted.
 * @param r the kernel's result.
 * @returns the observation text ("(no output)" when the cell printed nothing).
 */
export function formatKernelResult(r: KernelExecuteResult): string {
  const parts: string[] = [];
  if (r.restarted) {
    parts.push(
      '[The Python kernel was restarted: all variables were lost. The dataset preamble is run again before your next cell.]',
    );
  }
  if (r.stdout) parts.push(r.stdout.replace(/\n+$/, ''));
  if (r.tables?.length) for (const t of r.tables) parts.push(t.text);
  else if (r.result !== undefined && r.result !== null && r.result !== '') parts.push(r.result);
  if (r.figures?.length) parts.push(`[${r.figures.length} figure${r.figures.length > 1 ? 's' : ''} produced]`);
  if (r.stderr && r.status === 'ok') parts.push(`[stderr]\n${r.stderr.replace(/\n+$/, '')}`);
  if (r.status === 'timeout') parts.push('[Error] The cell timed out and was interrupted.');
  if (r.status === 'crashed') parts.push('[Error] The Python process crashed (out of memory or killed).');
  if (r.error) {
    const tb = r.error.traceback?.length ? r.error.traceback.join('\n') : '';
    parts.push(`[Error] ${r.error.ename}: ${r.error.evalue}${tb ? `\n${stripAnsi(tb)}` : ''}`);
  } else if (r.status === 'error' && r.stderr) {
    parts.push(`[Error]\n${r.stderr.replace(/\n+$/, '')}`);
  }
  return parts.length ? parts.join('\n') : '(no output)';
}

function stripAnsi(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/\u001b\[[0-9;]*m/g, '');
}

/**
 * Runs `preamble` in the run's kernel once (again after a restart), through `ctx.execute` so the cell
 * is recorded and replayed on resume. The flag lives in `ctx.state.extra[key]`.
 * @param ctx the tool context; `key` the state flag name; `preamble` Python code.
 * @returns `null` on success, else an error observation saying why the preamble failed.
 */
export async function ensurePreamble(ctx: ToolContext, key: string, preamble: string): Promise<ToolResult | null> {
  if (ctx.state.extra[key] === true) return null;
  const r = await ctx.execute(preamble);
  if (r.status !== 'ok') {
    return {
      observation: `The environment could not be prepared (dataset preamble failed):\n${formatKernelResult(r)}`,
      isError: true,
      data: r,
    };
  }
  ctx.state.extra[key] = true;
  return null;
}

/**
 * Runs agent code in the kernel after the preamble; resets the preamble flag when the kernel restarted.
 * @returns the tool result (observation per {@link formatKernelResult}; `data` = the raw kernel result).
 */
export async function runPythonTool(
  ctx: ToolContext,
  key: string,
  preamble: string,
  code: string,
): Promise<ToolResult> {
  const pre = await ensurePreamble(ctx, key, preamble);
  if (pre) return pre;
  const r = await ctx.execute(code);
  if (r.restarted) ctx.state.extra[key] = false;
  return { observation: formatKernelResult(r), isError: r.status !== 'ok', data: r };
}

/** Python string literal for a path or any text (JSON strings are valid Python literals). */
export function pyStr(s: string): string {
  return JSON.stringify(s);
}
