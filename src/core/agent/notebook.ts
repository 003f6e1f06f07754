/**
 * Turns a run's kernel cells into a Jupyter notebook (nbformat 4.5): every `python` tool call becomes a code
 * cell with its outputs (stdout/stderr streams, the final expression as text/plain — and an escaped text/markdown
 * table for DataFrames —, PNG figures, errors with traceback). Analyst cells are marked in metadata. The VS Code
 * notebook view renders the same outputs live. Source: issue 7 "Notebook"; nbformat 4 schema
 * (jupyter/nbformat `nbformat.v4.schema.json`).
 *
 * Issue 38: an output is agent data, never live markup. No output carries a mime type a notebook renders as live
 * HTML or code (`text/html`, `image/svg+xml`, `application/javascript`, `text/latex`, widget and vendor types …):
 * a DataFrame becomes a Markdown table Loupe builds from its values with every character that could be markup
 * written as an entity; stream, error and text outputs have control characters shown escaped. The agent's raw
 * `to_html` stays in the store (`KernelCellRecord.tables[].html`) as evidence, shown as text on demand.
 * {@link safeOutputData} applies the same rule to outputs read back from an existing `.ipynb` (convert on read).
 */
import type { KernelTableData } from '../kernel/python-kernel.ts';
import { markdownText, neutraliseControls } from '../util/text-safety.ts';
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
  metadata: {
    loupe?: { runId: string; step: number; seq: number; author: CellAuthor; status: string; durationMs: number };
  } & Record<string, unknown>;
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
 * Mime types a notebook may show from agent data: text, Markdown Loupe wrote (checked with {@link isInertMarkdown}),
 * raster images (drawn as pixels) and VS Code's stream/error types. Everything else — `text/html`, `image/svg+xml`,
 * `application/javascript`, `text/latex`, `application/json`, widget and vendor types — is shown as text.
 */
export const SAFE_OUTPUT_MIMES: ReadonlySet<string> = new Set([
  'text/plain',
  'text/markdown',
  'image/png',
  'image/jpeg',
  'image/gif',
  'application/vnd.code.notebook.stdout',
  'application/vnd.code.notebook.stderr',
  'application/vnd.code.notebook.error',
]);

/**
 * Whether Markdown holds nothing a renderer could read as HTML, a link, an image, code or maths: none of `< > [ ] (
 * ) \` ! : = \ $` and no control character. Loupe's tables ({@link tableMarkdown}) always pass; Markdown from
 * anywhere else that fails is shown as text.
 * @param md Markdown source. @returns true when inert. Never throws.
 * Source: issue 38.
 */
export function isInertMarkdown(md: string): boolean {
  // eslint-disable-next-line no-control-regex
  return !/[<>[\]()`!:=\\$\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(md);
}

/** At most `max` strings of an array the agent's process sent, each cut to 400 characters. */
const strings = (v: unknown, max: number): string[] =>
  Array.isArray(v) ? v.slice(0, max).map((x) => (typeof x === 'string' ? x : String(x)).slice(0, 400)) : [];

/**
 * A DataFrame's values (as the kernel driver sends them, {@link KernelTableData}) as a GitHub-flavoured Markdown
 * table: the index as the first column, every label and cell through {@link markdownText}, `…` rows/columns where
 * the driver cut, and a last line with the DataFrame's full shape. The values are checked (arrays of strings, at
 * most 60 rows × 30 columns are read) since they come from the agent's process.
 * @param data the table values. @returns Markdown source that passes {@link isInertMarkdown}. Never throws.
 * Source: issue 38; GFM spec §4.10 (tables).
 */
export function tableMarkdown(data: KernelTableData): string {
  const cols = strings(data?.columns, 30);
  const index = strings(data?.index, 60);
  const rows = (Array.isArray(data?.rows) ? data.rows.slice(0, 60) : []).map((r) => strings(r, 30));
  const rowGap = typeof data?.rowGap === 'number' ? data.rowGap : null;
  const colGap = typeof data?.colGap === 'number' ? data.colGap : null;
  const withGap = (cells: string[], gapCell: string) =>
    colGap !== null && colGap <= cells.length ? [...cells.slice(0, colGap), gapCell, ...cells.slice(colGap)] : cells;
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const header = line(['', ...withGap(cols.map(markdownText), '…')]);
  const sep = line([
    '---',
    ...withGap(
      cols.map(() => '---'),
      '---',
    ),
  ]);
  const body: string[] = [];
  rows.forEach((r, i) => {
    if (rowGap !== null && i === rowGap) {
      body.push(
        line([
          '…',
          ...withGap(
            cols.map(() => '…'),
            '…',
          ),
        ]),
      );
    }
    const cells = cols.map((_, j) => markdownText(r[j] ?? ''));
    body.push(line([`**${markdownText(index[i] ?? '')}**`, ...withGap(cells, '…')]));
  });
  const shape = Array.isArray(data?.shape) ? data.shape.map(Number) : [rows.length, cols.length];
  return [header, sep, ...body, '', `${shape[0]} rows × ${shape[1]} columns`].join('\n');
}

const join2 = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join('') : (v ?? ''));

/**
 * One output's mime bundle made safe to render (issue 38; used for new outputs and for outputs read back from an
 * existing `.ipynb`): `text/plain` has controls escaped; `text/markdown` stays only when {@link isInertMarkdown};
 * PNG/JPEG/GIF stay; every other type (`text/html`, `image/svg+xml`, `application/javascript`, `text/latex`, JSON,
 * vendor types) is dropped — and, when the bundle then has no text, shown as `text/plain` with a line naming the
 * type (`[text/html output, shown as text]`). An unsafe `text/markdown` likewise becomes text.
 * @param data an nbformat mime bundle (values as a string or a list of lines).
 * @returns `{ data, dropped }`: the safe bundle and the mime types removed (empty when nothing changed). Never throws.
 * Source: issue 38; nbformat 4 `mimebundle`.
 */
export function safeOutputData(data: Record<string, string | string[]>): {
  data: Record<string, string | string[]>;
  dropped: string[];
} {
  const out: Record<string, string | string[]> = {};
  const dropped: string[] = [];
  const unsafe: Array<[string, string]> = [];
  for (const [mime, value] of Object.entries(data ?? {})) {
    const m = mime.toLowerCase().trim();
    if (m === 'text/plain') out['text/plain'] = toLines(neutraliseControls(join2(value)));
    else if (m === 'text/markdown' && isInertMarkdown(join2(value))) out['text/markdown'] = value;
    else if (
      (m === 'image/png' || m === 'image/jpeg' || m === 'image/gif') &&
      /^[A-Za-z0-9+/=\s]*$/.test(join2(value))
    ) {
      out[m] = value;
    } else {
      dropped.push(mime);
      unsafe.push([mime, join2(value)]);
    }
  }
  if (!out['text/plain'] && unsafe.length) {
    out['text/plain'] = toLines(
      unsafe
        .map(
          ([m, v]) =>
            `[${neutraliseControls(m, { keepNewlines: false })} output, shown as text]\n${neutraliseControls(v)}`,
        )
        .join('\n'),
    );
  }
  return { data: out, dropped };
}

/**
 * One nbformat output made safe to render (see {@link safeOutputData}; streams and errors get controls escaped).
 * @param o an output as stored in an `.ipynb`. @returns a new output; `changed` tells whether anything differed.
 * Never throws. Source: issue 38.
 */
export function safeNotebookOutput(o: NotebookOutput): { output: NotebookOutput; changed: boolean } {
  if (o.output_type === 'stream') {
    const text = join2(o.text);
    const safe = neutraliseControls(text);
    return { output: { ...o, text: toLines(safe) }, changed: safe !== text };
  }
  if (o.output_type === 'error') {
    const tb = (o.traceback ?? []).map((l) => neutraliseControls(String(l)));
    const output = {
      ...o,
      ename: neutraliseControls(o.ename ?? ''),
      evalue: neutraliseControls(o.evalue ?? ''),
      traceback: tb,
    };
    return { output, changed: JSON.stringify(output) !== JSON.stringify(o) };
  }
  const { data, dropped } = safeOutputData(o.data ?? {});
  return {
    output: { ...o, data },
    changed: dropped.length > 0 || JSON.stringify(data) !== JSON.stringify(o.data ?? {}),
  };
}

/**
 * A notebook read from disk made safe to render: every code cell's outputs through {@link safeNotebookOutput}
 * (a notebook written before issue 38 holds the agent's `text/html`).
 * @param nb a parsed `.ipynb` (any nbformat-4-like object; cells without outputs are left alone).
 * @returns the number of outputs changed (the notebook is changed in place). Never throws on odd shapes.
 * Source: issue 38.
 */
export function sanitiseNotebook(nb: { cells?: Array<{ outputs?: NotebookOutput[] }> }): number {
  let n = 0;
  for (const c of Array.isArray(nb?.cells) ? nb.cells : []) {
    if (!Array.isArray(c?.outputs)) continue;
    c.outputs = c.outputs.map((o) => {
      const r = safeNotebookOutput(o);
      if (r.changed) n++;
      return r.output;
    });
  }
  return n;
}

/** One item of a VS Code notebook output: its mime type and its text, or (images) its base64 bytes. */
export interface OutputItemSpec {
  mime: string;
  text?: string;
  base64?: string;
  /** An error item: what `NotebookCellOutputItem.error` takes. */
  error?: { name: string; message: string; stack: string };
}

/**
 * The items of the VS Code notebook output for one nbformat output, after {@link safeNotebookOutput}: a stream as
 * `application/vnd.code.notebook.stdout|stderr`, an error as `application/vnd.code.notebook.error`, a mime bundle
 * as one item per safe type, richest first (image, then `text/markdown`, then `text/plain`: VS Code shows the first
 * it can render). The VS Code glue (`toVscodeOutputs`) only turns these into `NotebookCellOutputItem`s.
 * @param raw an nbformat output (new, or read from an existing `.ipynb`).
 * @returns the items; none has a mime type VS Code renders as live HTML or code. Never throws.
 * Source: issue 38; VS Code API `NotebookCellOutputItem`.
 */
export function notebookOutputItems(raw: NotebookOutput): OutputItemSpec[] {
  const o = safeNotebookOutput(raw).output;
  if (o.output_type === 'stream') {
    return [
      { mime: `application/vnd.code.notebook.${o.name === 'stderr' ? 'stderr' : 'stdout'}`, text: join2(o.text) },
    ];
  }
  if (o.output_type === 'error') {
    return [
      {
        mime: 'application/vnd.code.notebook.error',
        error: { name: o.ename ?? 'Error', message: o.evalue ?? '', stack: (o.traceback ?? []).join('\n') },
      },
    ];
  }
  const rank = (m: string) => (m.startsWith('image/') ? 0 : m === 'text/markdown' ? 1 : 2);
  return Object.entries(o.data ?? {})
    .map(([mime, v]): OutputItemSpec =>
      mime.startsWith('image/') ? { mime, base64: join2(v) } : { mime, text: join2(v) },
    )
    .sort((a, b) => rank(a.mime) - rank(b.mime));
}

/**
 * The outputs of one kernel cell in nbformat form, safe to render (issue 38): streams and errors with controls
 * escaped, the result as `text/plain`, a DataFrame as an escaped `text/markdown` table built from its values (cells
 * recorded before issue 38 have no values: their table is text only), figures as PNG. Never `text/html`: the
 * agent's `to_html` stays in the store.
 * @param c a stored kernel cell; `executionCount` its number in the notebook.
 * @returns nbformat outputs; every mime bundle passes {@link safeOutputData} unchanged. Never throws.
 * Source: issue 7 "Notebook"; issue 38.
 */
export function kernelCellOutputs(
  c: Pick<KernelCellRecord, 'stdout' | 'stderr' | 'result' | 'tables' | 'figures' | 'error' | 'status'>,
  executionCount: number | null,
): NotebookOutput[] {
  const out: NotebookOutput[] = [];
  const safe = (s: string) => neutraliseControls(s);
  if (c.stdout) out.push({ output_type: 'stream', name: 'stdout', text: toLines(safe(c.stdout)) });
  if (c.stderr) out.push({ output_type: 'stream', name: 'stderr', text: toLines(safe(c.stderr)) });
  const table = c.tables[0];
  const tableData = (): Record<string, string[]> => {
    const data: Record<string, string[]> = { 'text/plain': toLines(safe(table?.text ?? c.result ?? '')) };
    if (table?.data) data['text/markdown'] = toLines(tableMarkdown(table.data));
    return data;
  };
  if (c.result !== null && c.result !== undefined) {
    out.push({ output_type: 'execute_result', data: tableData(), metadata: {}, execution_count: executionCount });
  } else if (table) {
    out.push({ output_type: 'display_data', data: tableData(), metadata: {} });
  }
  for (const png of c.figures) {
    out.push({ output_type: 'display_data', data: { 'image/png': png, 'text/plain': ['<Figure>'] }, metadata: {} });
  }
  if (c.error) {
    out.push({
      output_type: 'error',
      ename: safe(c.error.ename),
      evalue: safe(c.error.evalue),
      traceback: c.error.traceback.map(safe),
    });
  } else if (c.status === 'timeout' || c.status === 'crashed') {
    out.push({
      output_type: 'error',
      ename: c.status === 'timeout' ? 'TimeoutError' : 'KernelCrashed',
      evalue: safe(c.stderr.trim().split('\n').pop() ?? c.status),
      traceback: [],
    });
  }
  return out;
}

/**
 * Builds the notebook of a run.
 * @param cells the run's kernel cells in order (replays excluded by the caller); `authorOf` tells analyst cells
 *   apart (default: all agent).
 * @returns an nbformat 4.5 notebook object (serialise with `JSON.stringify(nb, null, 1)`).
 */
export function buildRunNotebook(
  run: { id: string; blockId: string; suite: string; model: string | null; agent: string },
  cells: readonly KernelCellRecord[],
  authorOf: (c: KernelCellRecord) => CellAuthor = () => 'agent',
): Notebook {
  const header: NotebookCell = {
    cell_type: 'markdown',
    id: `loupe-${run.id}-header`,
    // Stored names may be hostile (issue 38): Markdown-escaped, never inside a code span they could close.
    source: toLines(
      `# ${markdownText(run.blockId)}\n\nRun ${markdownText(run.id)} · ${markdownText(run.suite)} · agent ${markdownText(run.agent)}${run.model ? ` · model ${markdownText(run.model)}` : ''}.\n` +
        "Code cells are the agent's `python` tool calls in order, with the outputs it saw. Cells marked *analyst* were added while checking its work.",
    ),
    metadata: {},
  };
  const codeCells = cells.map((c, i): NotebookCell => ({
    cell_type: 'code',
    id: `loupe-${run.id}-${c.seq}`,
    source: toLines(c.code),
    metadata: {
      loupe: {
        runId: run.id,
        step: c.stepIndex,
        seq: c.seq,
        author: authorOf(c),
        status: c.status,
        durationMs: c.durationMs,
      },
    },
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
