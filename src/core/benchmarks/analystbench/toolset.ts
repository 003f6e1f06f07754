/**
 * AnalystBench-style tool set: the agent reads local sources and writes a report with figures.
 * Tools: `list_files(glob)`, `read_doc`, `search_doc`, `retriever` (the documentation index),
 * `python(code)` (matplotlib figures are saved as PNG in the run folder next to the code that made
 * them), and `write_report(markdown)` producing `report.md` that references its figures.
 * The paper's four input settings are a named option (spec §4.1 "Input configurations").
 *
 * Source: spec §4.1–§4.2 (AnalystBench has no public code; OpenHands-like local-file agent,
 * "the agent must write the report file").
 */
import {
  containedFileExists,
  readContainedFile,
  removeContainedEntry,
  writeContainedFile,
} from '../../util/contained.ts';
import { globMatcher } from '../../suites/glob.ts';
import { dirname, isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import type { DocIndex } from '../../docs/types.ts';
import { acquireDocIndex, waitForDocs, type DocIndexLease, type DocNeed } from '../../docs/shared-build.ts';
import type { Block } from '../../suites/types.ts';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import type { HostPath, ToolContext, ToolDefinition, ToolResult, ToolSet } from '../../agent/types.ts';
import { formatKernelResult, ensurePreamble } from '../../agent/kernel-output.ts';

/**
 * AnalystBench input settings (spec §4.1):
 * - `instruction`: the task instruction 𝒯 only (no sources are listed or searchable);
 * - `sources`: 𝒯 + the source documents 𝒮;
 * - `toc`: 𝒯 + 𝒮 + the reference report's table of contents (the paper's default);
 * - `template`: 𝒯 + 𝒮 + the reference report of another variant as a template (ℛ*).
 */
export type AnalystInputSetting = 'instruction' | 'sources' | 'toc' | 'template';
export const ANALYST_INPUT_SETTINGS: readonly AnalystInputSetting[] = ['instruction', 'sources', 'toc', 'template'];

/** Options of {@link createAnalystToolSet}. */
export interface AnalystToolSetOptions {
  /** Default `toc`. */
  input?: AnalystInputSetting;
  /** `template` setting: markdown of another variant's reference report. Required for `template`. */
  templateReport?: string;
  /** Where figures and `report.md` go; default the run workspace. */
  outputDir?: string;
  /** Step budget (the paper states none; default 50). */
  maxSteps?: number;
  /** Opens the documentation index over `root` (the documents' real folder; default: `openDocIndex` of `src/core/docs`). */
  openDocs?: (root: string, files: string[], sources?: Record<string, string>) => Promise<DocIndex>;
  /**
   * The block the runs of this tool set work on. With it (and without `openDocs`), when its documents live under one
   * folder, their index build is the docs layer's shared build (issue 23): started when the run starts, extracted in
   * worker threads, and each doc tool waits only for what it reads (one file, every file, or the complete index).
   */
  block?: Block;
}

/** A figure saved by the `python` tool. */
export interface AnalystFigure {
  /** Path relative to the output folder, e.g. `figures/fig-3-1.png`. */
  path: string;
  /** The cell's code, saved next to it (`figures/fig-3-1.py`). */
  codePath: string;
  stepIndex: number;
}

/** Per-run state under `state.extra.analyst`. */
export interface AnalystRunState {
  input: AnalystInputSetting;
  figures: AnalystFigure[];
  report: { path: string; chars: number; figures: string[] } | null;
}

/** Reads (creating) the AnalystBench state of a run. */
export function analystState(extra: Record<string, unknown>, input: AnalystInputSetting = 'toc'): AnalystRunState {
  const s = extra.analyst as AnalystRunState | undefined;
  if (s && Array.isArray(s.figures)) return s;
  const fresh: AnalystRunState = { input, figures: [], report: null };
  extra.analyst = fresh;
  return fresh;
}

function sourceFiles(block: Block): { rel: string; size: number }[] {
  return [...block.visible.data, ...block.visible.docs].map((f) => ({ rel: f.rel, size: f.size }));
}

/**
 * The task text for one input setting: instruction, then (per setting) the source files, the table of
 * contents, or a template report; then what to produce.
 * @throws LoupeInputError('template') when the setting is `template` without a template report, or
 *   ('toc') when the setting is `toc` and the block has no table of contents.
 */
export function buildAnalystBlockPrompt(block: Block, opts: AnalystToolSetOptions = {}): string {
  const input = opts.input ?? 'toc';
  const instruction =
    block.visible.instruction ?? block.items.find((i) => i.type === 'analyst-task')?.instruction ?? '';
  const lines = [`Task: ${instruction.trim()}`, ''];
  if (input !== 'instruction') {
    const files = sourceFiles(block);
    lines.push(
      `Source files (${files.length}, relative to your working directory; read them with read_doc / search_doc / retriever or load tables with python):`,
    );
    for (const f of files) lines.push(`- ${f.rel}${f.size ? ` (${f.size} bytes)` : ''}`);
    lines.push('');
  }
  if (input === 'toc') {
    if (!block.visible.tableOfContents) {
      throw new LoupeInputError('toc', `block ${block.id} has no table of contents; use the "sources" input setting`);
    }
    lines.push(
      'The report must follow this table of contents (sections, their key points and the visualisations they need):',
      block.visible.tableOfContents.trim(),
      '',
    );
  }
  if (input === 'template') {
    if (!opts.templateReport) {
      throw new LoupeInputError(
        'template',
        'the "template" input setting needs the reference report of another variant (templateReport)',
      );
    }
    lines.push(
      'Here is a published report of the same kind (another edition) to use as a template for structure and style. Do not copy its numbers:',
      '<template>',
      opts.templateReport.trim(),
      '</template>',
      '',
    );
  }
  lines.push(
    'Write the report in Markdown with `write_report`. Make figures with matplotlib in `python`: every figure a cell produces is saved as figures/fig-<step>-<n>.png and its path is given in the result; include figures in the report as ![caption](figures/fig-<step>-<n>.png).',
    'State only what the sources support, with numbers. Calling write_report ends the task.',
  );
  return lines.join('\n');
}

const SYSTEM_PROMPT = [
  'You are a professional analyst who writes published reports (statistical briefs, policy summaries, market reports) from source documents and data tables.',
  'Work from the local files only: find what matters, compute the numbers with Python, make clear figures, and write a well-structured report.',
  'Call one tool at a time. Finish by calling write_report with the complete Markdown report.',
].join('\n');

const docIndexes = new Map<string, Promise<DocIndex>>();

async function defaultOpenDocs(root: string, files: string[], sources?: Record<string, string>): Promise<DocIndex> {
  const { openDocIndex } = await import('../../docs/index.ts');
  const idx = await openDocIndex(sources ? { root, sources } : { root, files });
  await idx.build();
  return idx;
}

/**
 * The real folder the block's documents live under (each doc's path minus its workspace-relative
 * path), so the index reads the originals rather than workspace links; undefined when they differ.
 */
function docsRoot(block: Block): string | undefined {
  const roots = new Set(
    block.visible.docs.map((d) => (d.path.endsWith(d.rel) ? d.path.slice(0, d.path.length - d.rel.length) : '\u0000')),
  );
  const [only] = roots;
  return roots.size === 1 && only !== '\u0000' ? only : undefined;
}

/**
 * Where the doc tools read a block's documents (issue 36): the documents' shared real folder when there is one, else
 * the suite's own files (each doc's `path`, named by its workspace-relative `rel`) under their common folder — never the
 * run's workspace, where the agent can plant a link, FIFO or hard link under a document's name.
 */
function docsSource(block: Block): { root: string; files: string[]; sources?: Record<string, string> } {
  const files = block.visible.docs.map((d) => d.rel);
  const shared = docsRoot(block);
  if (shared !== undefined) return { root: shared, files };
  const dirs = block.visible.docs.map((d) => dirname(resolve(d.path)));
  let common = dirs[0] ?? resolve('.');
  for (const d of dirs) {
    while (common !== dirname(common) && d !== common && !d.startsWith(common.endsWith(sep) ? common : common + sep)) {
      common = dirname(common);
    }
  }
  return { root: common, files, sources: Object.fromEntries(block.visible.docs.map((d) => [d.rel, resolve(d.path)])) };
}

/** Closes the documentation indexes opened by AnalystBench runs (CLI exit, tests). */
export async function closeAnalystDocIndexes(): Promise<void> {
  for (const p of docIndexes.values()) (await p.catch(() => undefined))?.close();
  docIndexes.clear();
}

/**
 * Saves the figures of a kernel result as PNG with the code that made them, contained (issue 36): each file is
 * created new in `figures/` and renamed into place; a link, FIFO, socket or hard link planted at `figures/` or at a
 * figure's path is never written through, and that figure is not saved.
 * @param outDir the run's output folder (the workspace); `stepIndex` the step; `code` the cell's source; `figures`
 *   base64 PNGs; `already` figures this step saved before.
 * @returns the saved figures (paths relative to `outDir`) and, for each one not saved, `<path>: <why>`.
 * @throws Error from the file system other than a refusal (disk full).
 */
export function saveFigures(
  outDir: string,
  stepIndex: number,
  code: string,
  figures: { png: string }[],
  already: number,
): { saved: AnalystFigure[]; refused: string[] } {
  const saved: AnalystFigure[] = [];
  const refused: string[] = [];
  figures.forEach((f, k) => {
    const base = `figures/fig-${stepIndex}-${already + k + 1}`;
    let png = false;
    try {
      writeContainedFile(outDir, `${base}.png`, Buffer.from(f.png, 'base64'));
      png = true;
      writeContainedFile(outDir, `${base}.py`, code);
      saved.push({ path: `${base}.png`, codePath: `${base}.py`, stepIndex });
    } catch (e) {
      if (!(e instanceof LoupeInputError)) throw e;
      // a figure is saved with its code or not at all
      if (png) removeContainedEntry(outDir, `${base}.png`);
      refused.push(errorMessage(e));
    }
  });
  return { saved, refused };
}

/** Image references `![..](path)` and `<img src="path">` of a Markdown text (local paths only). */
export function reportImageRefs(markdown: string): string[] {
  const refs = new Set<string>();
  for (const m of markdown.matchAll(/!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) refs.add(m[1]!);
  for (const m of markdown.matchAll(/<img[^>]+src=["']([^"']+)["']/gi)) refs.add(m[1]!);
  return [...refs].filter((r) => !/^(?:https?:|data:)/i.test(r));
}

/**
 * The workspace paths AnalystBench's host-side code touches (issue 36): `python` saves figures and their cells under
 * `figures/`; `write_report` checks the figures a report embeds and writes `report.md`; scoring, review, export and
 * artefact capture read them. Each goes through the contained file API.
 */
export const ANALYST_HOST_PATHS: readonly HostPath[] = [
  { path: 'report.md', example: 'report.md', kind: 'file', tools: ['write_report'], access: ['write', 'read'] },
  { path: 'figures', example: 'figures', kind: 'dir', tools: ['python', 'write_report'], access: ['write', 'exists'] },
  {
    path: 'figures/fig-<step>-<n>.png',
    example: 'figures/fig-0-1.png',
    kind: 'file',
    tools: ['python', 'write_report'],
    access: ['write', 'exists', 'read'],
  },
  {
    path: 'figures/fig-<step>-<n>.py',
    example: 'figures/fig-0-1.py',
    kind: 'file',
    tools: ['python'],
    access: ['write', 'read'],
  },
];

const PREAMBLE = [
  'import matplotlib',
  'matplotlib.use("Agg")',
  'import matplotlib.pyplot as plt',
  'import pandas as pd',
  'import numpy as np',
].join('\n');

/**
 * The AnalystBench tool set.
 * @param opts see {@link AnalystToolSetOptions}.
 * @returns a {@link ToolSet} over AnalystBench {@link Block}s (`id` `analystbench-<input>`).
 */
export function createAnalystToolSet(opts: AnalystToolSetOptions = {}): ToolSet<Block> {
  const input = opts.input ?? 'toc';
  if (!ANALYST_INPUT_SETTINGS.includes(input)) {
    throw new LoupeInputError(
      'input',
      `unknown AnalystBench input setting '${String(input)}' (expected ${ANALYST_INPUT_SETTINGS.join(', ')})`,
    );
  }
  const openDocs = opts.openDocs ?? defaultOpenDocs;
  const outDir = (ctx: ToolContext) => opts.outputDir ?? ctx.workspace;
  const docs = (ctx: ToolContext): Promise<DocIndex> => {
    const src = docsSource(ctx.block as Block);
    const key = `${src.root}\u0000${src.sources ? JSON.stringify(src.sources) : src.files.join('\u0000')}`;
    let p = docIndexes.get(key);
    if (!p) {
      p = openDocs(src.root, src.files, src.sources);
      p.catch(() => docIndexes.delete(key));
      docIndexes.set(key, p);
    }
    return p;
  };
  // issue 23: the block's shared documentation build, when its documents live under one folder
  const sharedRoot =
    !opts.openDocs && opts.block && input !== 'instruction' && opts.block.visible.docs.length
      ? docsRoot(opts.block)
      : undefined;
  const sharedFiles = opts.block?.visible.docs.map((d) => d.rel) ?? [];
  let lease: DocIndexLease | undefined;
  const docTool = async (
    ctx: ToolContext,
    need: DocNeed,
    f: (d: DocIndex) => { text: string; hits: unknown[] },
  ): Promise<ToolResult> => {
    if (input === 'instruction') {
      return { observation: 'No source documents are available in this setting.', isError: true };
    }
    if (sharedRoot !== undefined) {
      const l = (lease ??= acquireDocIndex(sharedRoot, sharedFiles, undefined));
      let got;
      try {
        got = await waitForDocs(l, need);
      } catch (e) {
        // a failed build is reported here and tried again by the next doc tool call
        if (lease === l) lease = undefined;
        l.release();
        return { observation: `Error: the documentation index could not be opened: ${errorMessage(e)}`, isError: true };
      }
      try {
        const r = f(got.index);
        return { observation: r.text, data: { hits: r.hits, index: got.wait } };
      } catch (e) {
        return { observation: `Error: ${errorMessage(e)}`, isError: true };
      }
    }
    try {
      const r = f(await docs(ctx));
      return { observation: r.text, data: { hits: r.hits } };
    } catch (e) {
      return { observation: `Error: ${errorMessage(e)}`, isError: true };
    }
  };
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);

  const tools: ToolDefinition[] = [
    {
      name: 'list_files',
      description:
        'List the source files whose relative path matches a glob (e.g. "**/*.csv", "*.md", "data/*"). Default: all files.',
      parameters: {
        type: 'object',
        properties: { glob: { type: 'string', description: 'Glob pattern; "**" matches across folders.' } },
      },
      run: async (args, ctx) => {
        if (input === 'instruction') return { observation: 'No source files are available in this setting.' };
        let match: (rel: string) => boolean;
        try {
          match = globMatcher(String(args.glob ?? '**'), 'glob', { matchBase: true });
        } catch (e) {
          return { observation: errorMessage(e), isError: true };
        }
        const files = sourceFiles(ctx.block as Block).filter((f) => match(f.rel));
        return {
          observation: files.length
            ? files.map((f) => `${f.rel}${f.size ? `\t${f.size} bytes` : ''}`).join('\n')
            : `No files match ${JSON.stringify(args.glob ?? '**')}.`,
          data: { files: files.map((f) => f.rel) },
        };
      },
    },
    {
      name: 'read_doc',
      description: 'Read a document: a preview without range_str, or units (pages / lines / rows) like "1-3,5".',
      parameters: {
        type: 'object',
        properties: { doc_path: { type: 'string' }, range_str: { type: 'string' } },
        required: ['doc_path'],
      },
      run: (args, ctx) =>
        docTool(ctx, str(args.doc_path) ? { file: String(args.doc_path) } : 'all files', (d) =>
          d.readDoc(String(args.doc_path), str(args.range_str)),
        ),
    },
    {
      name: 'search_doc',
      description: 'Exact, case-insensitive keyword search in one document or all documents, with context.',
      parameters: {
        type: 'object',
        properties: {
          keyword: { type: 'string' },
          doc_path: { type: 'string' },
          max_matches: { type: 'integer' },
          context_chars: { type: 'integer' },
        },
        required: ['keyword'],
      },
      run: (args, ctx) =>
        docTool(ctx, str(args.doc_path) ? { file: String(args.doc_path) } : 'all files', (d) =>
          d.searchDoc(String(args.keyword), str(args.doc_path), num(args.max_matches), num(args.context_chars)),
        ),
    },
    {
      name: 'retriever',
      description: 'BM25 search of the documents: the passages most relevant to a query.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string' }, doc_path: { type: 'string' }, max_matches: { type: 'integer' } },
        required: ['query'],
      },
      run: (args, ctx) =>
        docTool(ctx, 'complete index', (d) =>
          d.retrieve(String(args.query), str(args.doc_path), num(args.max_matches)),
        ),
    },
    {
      name: 'python',
      description:
        'Run Python in a persistent kernel (pandas, numpy, matplotlib imported). Figures left open at the end of a cell are saved as PNG under figures/ and their paths returned.',
      parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
      run: async (args, ctx) => {
        const pre = await ensurePreamble(ctx, 'analystPreamble', PREAMBLE);
        if (pre) return pre;
        const code = String(args.code);
        const r = await ctx.execute(code);
        if (r.restarted) ctx.state.extra.analystPreamble = false;
        const st = analystState(ctx.state.extra, input);
        const { saved, refused } = saveFigures(
          outDir(ctx),
          ctx.stepIndex,
          code,
          r.figures ?? [],
          st.figures.filter((f) => f.stepIndex === ctx.stepIndex).length,
        );
        st.figures.push(...saved);
        let obs = formatKernelResult(r);
        if (saved.length) obs += `\nSaved: ${saved.map((f) => f.path).join(', ')}`;
        if (refused.length) obs += `\nNot saved: ${refused.join('; ')}`;
        return {
          observation: obs,
          isError: r.status !== 'ok',
          data: { ...r, figures: undefined, savedFigures: saved },
        };
      },
    },
    {
      name: 'write_report',
      description:
        'Write the final report (Markdown) to report.md. Figures are referenced as ![caption](figures/fig-<step>-<n>.png). Ends the task.',
      parameters: {
        type: 'object',
        properties: { markdown: { type: 'string', description: 'The complete report.' } },
        required: ['markdown'],
      },
      run: async (args, ctx) => {
        const md = String(args.markdown ?? '');
        if (!md.trim()) return { observation: 'The report is empty.', isError: true };
        const dir = outDir(ctx);
        const refs = reportImageRefs(md);
        // a reference to a planted link, FIFO or hard link counts as missing: the check follows nothing (issue 36)
        const missing = refs.filter(
          (r) => isAbsolute(r) || normalize(r).startsWith('..') || !containedFileExists(dir, r),
        );
        if (missing.length) {
          return {
            observation: `The report references figures that do not exist: ${missing.join(', ')}. Saved figures: ${
              analystState(ctx.state.extra, input)
                .figures.map((f) => f.path)
                .join(', ') || 'none'
            }. (Only regular files of the workspace count: a link, FIFO or socket there is not followed.)`,
            isError: true,
          };
        }
        try {
          writeContainedFile(dir, 'report.md', md);
        } catch (e) {
          if (!(e instanceof LoupeInputError)) throw e;
          return {
            observation: `The report was not written: ${errorMessage(e)}. Remove it (or write nothing there) and call write_report again.`,
            isError: true,
          };
        }
        const st = analystState(ctx.state.extra, input);
        st.report = { path: 'report.md', chars: md.length, figures: refs.map((r) => relative(dir, join(dir, r))) };
        return {
          observation: `Report written to report.md (${md.length} characters, ${refs.length} figure${refs.length === 1 ? '' : 's'}).`,
          finish: true,
          data: st.report,
        };
      },
    },
  ];
  return {
    id: `analystbench-${input}`,
    tools: input === 'instruction' ? tools.filter((t) => t.name === 'python' || t.name === 'write_report') : tools,
    systemPrompt: SYSTEM_PROMPT,
    buildBlockPrompt: (block) => buildAnalystBlockPrompt(block, opts),
    noToolCallMessage: 'Continue with a tool call; call write_report with the full Markdown report when you are done.',
    defaultMaxSteps: opts.maxSteps ?? 50,
    hostPaths: ANALYST_HOST_PATHS,
    ...(sharedRoot !== undefined
      ? {
          // the documentation build starts with the run, overlapping the model's first turn (issue 23)
          prepare({ signal }: { signal: AbortSignal }) {
            lease ??= acquireDocIndex(sharedRoot, sharedFiles, undefined);
            const release = () => {
              signal.removeEventListener('abort', release);
              lease?.release();
              lease = undefined;
            };
            signal.addEventListener('abort', release, { once: true });
            return release;
          },
        }
      : {}),
  };
}

/**
 * Reads a report written by a run (`report.md` in the output folder), contained (issue 36).
 * @returns the text, or null when it is absent, planted (link, FIFO, hard link) or too large.
 */
export function readAnalystReport(outDir: string): string | null {
  try {
    return readContainedFile(outDir, 'report.md', 'utf8');
  } catch {
    return null; // absent, or a link planted in the workspace (never followed)
  }
}
