/**
 * Turns a run's kernel cells into a Jupyter notebook (nbformat 4.5): every `python` tool call becomes a code
 * cell with its outputs (stdout/stderr streams, the final expression as text/plain — and text/html for tables —,
 * PNG figures, errors with traceback). Analyst cells are marked in metadata. The VS Code notebook view renders the
 * same outputs live. Source: issue 7 "Notebook"; nbformat 4 schema (jupyter/nbformat `nbformat.v4.schema.json`).
 */
import type { KernelCellRecord } from './types.ts';

export type CellAuthor = 'agent' | 'analyst';

export interface NotebookOutput {
  output_type: 'stream' | 'execute_result' | 'display_data' | 'error';
  name?: 'stdout' | 'stderr';
  text?: string[];
  data?: Record<string, string | string[]>;
  metadata?: Record<string, unknown>;
  execution_count?: number | null;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

export interface NotebookCell {
  cell_type: 'code' | 'markdown';
  id: string;
  source: string[];
  metadata: { loupe?: { runId: string; step: number; seq: number; author: CellAuthor; status: string; durationMs: number } } & Record<string, unknown>;
  outputs?: NotebookOutput[];
  execution_count?: number | null;
}

export interface Notebook {
  nbformat: 4;
  nbformat_minor: 5;
  metadata: Record<string, unknown>;
  cells: NotebookCell[];
}

/** Splits text into nbformat's list-of-lines form (each line keeps its newline). */
export function toLines(s: string): string[] {
  if (!s) return [];
  const parts = s.split(/(?<=\n)/);
  return parts;
}

/**
 * The outputs of one kernel cell in nbformat form.
 * @param c a stored kernel cell; `executionCount` its number in the notebook.
 */
export function kernelCellOutputs(c: Pick<KernelCellRecord, 'stdout' | 'stderr' | 'result' | 'tables' | 'figures' | 'error' | 'status'>, executionCount: number | null): NotebookOutput[] {
  const out: NotebookOutput[] = [];
  if (c.stdout) out.push({ output_type: 'stream', name: 'stdout', text: toLines(c.stdout) });
  if (c.stderr) out.push({ output_type: 'stream', name: 'stderr', text: toLines(c.stderr) });
  const table = c.tables[0];
  if (c.result !== null && c.result !== undefined) {
    const data: Record<string, string[]> = { 'text/plain': toLines(table?.text ?? c.result) };
    if (table?.html) data['text/html'] = toLines(table.html);
    out.push({ output_type: 'execute_result', data, metadata: {}, execution_count: executionCount });
  } else if (table) {
    out.push({ output_type: 'display_data', data: { 'text/html': toLines(table.html), 'text/plain': toLines(table.text) }, metadata: {} });
  }
  for (const png of c.figures) out.push({ output_type: 'display_data', data: { 'image/png': png, 'text/plain': ['<Figure>'] }, metadata: {} });
  if (c.error) out.push({ output_type: 'error', ename: c.error.ename, evalue: c.error.evalue, traceback: c.error.traceback });
  else if (c.status === 'timeout' || c.status === 'crashed') {
    out.push({ output_type: 'error', ename: c.status === 'timeout' ? 'TimeoutError' : 'KernelCrashed', evalue: c.stderr.trim().split('\n').pop() ?? c.status, traceback: [] });
  }
  return out;
}

/**
 * Builds the notebook of a run.
 * @param cells the run's kernel cells in order (replays excluded by the caller); `authorOf` tells analyst cells
 *   apart (default: all agent).
 * @returns an nbformat 4.5 notebook object (serialise with `JSON.stringify(nb, null, 1)`).
 */
export function buildRunNotebook(run: { id: string; blockId: string; suite: string; model: string | null; agent: string }, cells: readonly KernelCellRecord[], authorOf: (c: KernelCellRecord) => CellAuthor = () => 'agent'): Notebook {
  const header: NotebookCell = {
    cell_type: 'markdown',
    id: `loupe-${run.id}-header`,
    source: toLines(`# ${run.blockId}\n\nRun \`${run.id}\` · ${run.suite} · agent \`${run.agent}\`${run.model ? ` · model \`${run.model}\`` : ''}.\n` +
      'Code cells are the agent\'s `python` tool calls in order, with the outputs it saw. Cells marked *analyst* were added while checking its work.'),
    metadata: {},
  };
  const codeCells = cells.map((c, i): NotebookCell => ({
    cell_type: 'code',
    id: `loupe-${run.id}-${c.seq}`,
    source: toLines(c.code),
    metadata: { loupe: { runId: run.id, step: c.stepIndex, seq: c.seq, author: authorOf(c), status: c.status, durationMs: c.durationMs } },
    outputs: kernelCellOutputs(c, i + 1),
    execution_count: i + 1,
  }));
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3 (Loupe run kernel)', language: 'python' },
      language_info: { name: 'python' },
      loupe: { runId: run.id, blockId: run.blockId, suite: run.suite },
    },
    cells: [header, ...codeCells],
  };
}
