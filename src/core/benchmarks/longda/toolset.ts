/**
 * The LongDA tool set (LongTA's tools with their names and argument names) for the native
 * function-calling loop: `prompt`, `read_doc`, `search_doc`, `retriever`, `notes`, `answer`,
 * `save_code`, `python`, `final_answer`; and the block prompt, written in our own words, holding
 * the survey, every query as `Question ID: <id>` / `Q<i>: ...` / `Expected Answer Structure: ...` /
 * `Additional Info: ...`, then the data and documentation files relative to the workspace.
 * Differences from LongTA, on purpose: the `answer` tool checks that the q_id belongs to the block and
 * that a list has the structure's length (spec §2.7 items 2 and 10); `search_doc`'s `doc_path` is
 * optional (all docs when omitted).
 * Source: spec §2.3 (tool table, prompt, instructions), issue 5 "LongDA tool set".
 */
import type { Block } from '../../suites/types.ts';
import type { LongdaQuery } from './items.ts';
import { answerStructureText } from './parse.ts';
import { LONGDA_RUN_STATE, longdaRunState } from './run-state.ts';
import { parsePyLiteral } from '../../eval/py-literal.ts';
import type { AnswerValue, ToolContext, ToolDefinition, ToolModelUse, ToolResult, ToolSet } from '../../agent/types.ts';
import { addModelUse } from '../../agent/llm.ts';
import type { ToolSetContext } from '../types.ts';
import { formatKernelResult } from '../../agent/kernel-output.ts';
import { QuestionRetriever, decomposeWithModel, type LlmDecomposition } from '../../docs/question.ts';
import { surveyCatalog } from '../../docs/survey-catalog.ts';
import type { DocIndex } from '../../docs/types.ts';
import { waitForDocs, type DocIndexLease, type DocNeed, type DocWait } from '../../docs/shared-build.ts';

/** The document functions the doc tools call (`DocIndex` from src/core/docs implements them). */
export interface LongdaDocs {
  readDoc(path: string, range?: string, scope?: { files?: string[] }): { text: string };
  searchDoc(
    keyword: string,
    path?: string,
    maxMatches?: number,
    contextChars?: number,
    scope?: { files?: string[] },
  ): { text: string };
  retrieve(
    query: string,
    path?: string,
    k?: number,
    opts?: { files?: string[]; mode?: 'bm25' | 'longta'; contextChars?: number },
  ): { text: string };
}

/** True when the docs provider is a full documentation index (it has the variable catalog). */
function isDocIndex(d: LongdaDocs): d is LongdaDocs & DocIndex {
  return (
    typeof (d as Partial<DocIndex>).catalog === 'function' && typeof (d as Partial<DocIndex>).search === 'function'
  );
}

export interface LongdaToolSetOptions {
  /** Opens the documentation index of the block (called lazily once). Without it the doc tools say docs are unavailable. */
  docs?: () => Promise<LongdaDocs>;
  /**
   * The block's shared documentation index build (issue 23; takes precedence over `docs`): its lease is taken when the
   * run starts (`ToolSet.prepare`), so the build overlaps the model's first turn, and each doc tool waits only for
   * the stage it reads (see {@link createLongdaToolSet}).
   */
  docIndex?: () => DocIndexLease;
  /** `search_doc` defaults (LongTA config: 5 matches, 150 chars of context). */
  searchMaxMatches?: number;
  searchContextChars?: number;
  /** `retriever` top-k (LongTA config: 5). */
  retrieverK?: number;
  /** `retriever` ranking: `longta` (faithful) or `bm25` (Loupe's). Default `longta`. */
  retrieverMode?: 'bm25' | 'longta';
  /** Per-cell timeout of the python tool (ms). */
  pythonTimeoutMs?: number;
  /** Tools to leave out (LongTA `enabled_tools`, e.g. the example config drops `search_doc`). `answer` cannot be removed. */
  disabledTools?: string[];
  /** Step budget (LongTA paper: 100). */
  maxSteps?: number;
  /**
   * Adds Loupe's `find_variables` tool (question-level retrieval over the codebooks' variable catalog, issue 25).
   * Off by default: the LongTA tools stay exactly as in the benchmark.
   */
  findVariables?: boolean;
  /**
   * With `findVariables`: the run's model (`complete(system, user, { signal })` → reply text, tokens, cost) first breaks
   * each question into concepts, whose measures and population are searched as sub-queries (tool option
   * `findVariablesDecompose=run-model`). The calls' tokens and cost are returned with the tool call (`modelUse`).
   */
  decompose?: ToolSetContext['complete'];
}

/** LongTA `answer_structure` as written in benchmark.csv. */
export function structureText(q: LongdaQuery): string {
  return answerStructureText(q.answerStructure);
}

function queries(block: Block): LongdaQuery[] {
  return block.items.filter((i): i is LongdaQuery => i.type === 'longda-query');
}

const INSTRUCTIONS = `How to work:
1. Start by reading the task; the prompt tool shows it again, or only one question when given its Question ID.
2. Find the definitions, variables, weights and universes you need in the documentation with retriever, search_doc and read_doc. Keep what you learn with notes. Base every choice on the documentation and the data, not on what you remember about published figures.
3. Compute every answer from the data files with the python tool (pandas, numpy, scipy, statsmodels are available; the working directory is the workspace, so the paths above open as written). Apply the survey's sampling weights whenever the documentation says estimates are weighted.
4. Report numbers in the units the question asks for, rounded to one decimal place unless told otherwise. A list answer has exactly the elements named in its Expected Answer Structure, in that order. Record each answer with answer(action="add", q_id=..., answer=...), and store the code that produced your answers with save_code.
5. You may answer the questions one at a time; answer(action="list") and notes(action="list") show what you have so far. When every question is answered (or cannot be), call final_answer.`;

/**
 * The task text for a LongDA block (first user message).
 * @param block a `longda` block from `loadSuite('longda', root)`.
 * @returns the prompt; query ids are LongTA q_ids (`{survey}_{source}_q{i}`).
 */
export function buildLongdaPrompt(block: Block): string {
  const survey = block.longda?.survey ?? block.title;
  const qs = queries(block);
  const questionText = qs
    .map((q, i) =>
      [
        `Question ID: ${q.longdaId}`,
        `Q${i + 1}: ${q.question}`,
        `Expected Answer Structure: ${structureText(q)}`,
        `Additional Info: ${q.additionalInfo.trim() === '' ? 'NA.' : q.additionalInfo}`,
      ].join('\n'),
    )
    .join('\n\n');
  const list = (files: { rel: string }[]) => (files.length ? files.map((f) => f.rel).join('\n') : 'None provided');
  return [
    'Use the survey data and its documentation to answer the questions below. Every answer is a number or a list of numbers that you compute yourself.',
    `Survey: ${survey}`,
    '',
    'Questions and Expected Answer Structures:',
    '',
    questionText,
    '',
    'Available data files:',
    list(block.visible.data),
    '',
    'Available documentation files:',
    list(block.visible.docs),
    '',
    INSTRUCTIONS,
  ].join('\n');
}

const SYSTEM_PROMPT = `You are a careful survey data analyst working in a sandboxed workspace. You act only through the tools you are given: read the documentation, run Python on the data, keep notes, and record numeric answers with the answer tool. Every reply should call at least one tool. Call final_answer once all answers are recorded.`;

/**
 * Parses an answer argument into a number or a list of numbers (LongTA accepts int/float, a list of
 * numbers, or a string that `ast.literal_eval`s to one).
 * @returns the value, or an error message.
 */
export function parseAnswerArg(
  v: unknown,
): { ok: true; value: AnswerValue; raw: string } | { ok: false; error: string } {
  let x: unknown = v;
  if (typeof v === 'string') {
    const lit = parsePyLiteral(v.trim());
    if (lit === undefined) {
      return { ok: false, error: `the answer string ${JSON.stringify(v)} is not a number or a list of numbers` };
    }
    x = lit;
  }
  if (typeof x === 'number' && Number.isFinite(x)) {
    return { ok: true, value: x, raw: typeof v === 'string' ? v : String(x) };
  }
  if (Array.isArray(x) && x.length > 0 && x.every((e) => typeof e === 'number' && Number.isFinite(e))) {
    return { ok: true, value: x as number[], raw: typeof v === 'string' ? v : `[${(x as number[]).join(', ')}]` };
  }
  return { ok: false, error: `an answer must be a number or a non-empty list of numbers, got ${JSON.stringify(v)}` };
}

function fmtAnswer(a: AnswerValue): string {
  return Array.isArray(a) ? `[${a.join(', ')}]` : String(a);
}

/** The doc tools: with none of them a run needs no documentation index. */
const DOC_TOOLS = ['read_doc', 'search_doc', 'retriever', 'find_variables'];

/**
 * Builds the LongDA tool set for one block.
 * With `opts.docIndex`, the block's documentation index build starts when the run starts (`prepare`, only when a doc
 * tool is enabled) and a doc tool call waits only for what it reads (issue 23): `read_doc` and `search_doc` on one
 * file wait for that file (extracted next when still pending), `search_doc` over all files for every file of the
 * block, `retriever` and `find_variables` for the complete index. Results are always those of the complete index;
 * the step's tool data records the wait (`index: { waitedFor, waitedMs, filesReady, filesTotal }`, files of the block
 * current when the call was answered). A failed build is reported by the doc tool call (and tried again by the next).
 * @param block the block (its queries define valid q_ids and list lengths).
 * @param opts docs provider, search defaults, disabled tools.
 * @returns a {@link ToolSet} for {@link runAgent}.
 */
export function createLongdaToolSet(block: Block, opts: LongdaToolSetOptions = {}): ToolSet<Block> {
  const qs = queries(block);
  const byId = new Map(qs.map((q) => [q.longdaId, q]));
  const docFiles = block.visible.docs.map((d) => d.rel);
  let docsP: Promise<LongdaDocs> | undefined;
  let lease: DocIndexLease | undefined;
  const docs = async (need: DocNeed = 'complete index'): Promise<LongdaDocs | string> => (await docsWithNote(need)).d;
  const docsWithNote = async (need: DocNeed): Promise<{ d: LongdaDocs | string; note?: DocWait }> => {
    if (opts.docIndex) {
      const l = (lease ??= opts.docIndex());
      try {
        const { index, wait } = await waitForDocs(l, need);
        return { d: index, note: wait };
      } catch (e) {
        if (lease === l) lease = undefined;
        l.release();
        return { d: `Error: the documentation index could not be opened: ${(e as Error).message}` };
      }
    }
    if (!opts.docs) return { d: 'Error: the documentation index is not available in this run.' };
    docsP ??= opts.docs();
    try {
      return { d: await docsP };
    } catch (e) {
      docsP = undefined;
      return { d: `Error: the documentation index could not be opened: ${(e as Error).message}` };
    }
  };
  const docCall = async (need: DocNeed, f: (d: LongdaDocs) => { text: string }): Promise<ToolResult> => {
    const { d, note } = await docsWithNote(need);
    if (typeof d === 'string') return { observation: d, isError: true };
    try {
      const r = f(d);
      return { observation: r.text, data: note ? { ...r, index: note } : r, isError: /^Error\b/.test(r.text) };
    } catch (e) {
      return { observation: `Error: ${(e as Error).message}`, isError: true };
    }
  };
  const fileOr = (p: string | undefined, otherwise: DocNeed): DocNeed => (p ? { file: p } : otherwise);
  const int = (v: unknown) => (typeof v === 'number' ? Math.trunc(v) : undefined);
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

  let retriever: QuestionRetriever | undefined;
  const findVariables: ToolDefinition = {
    name: 'find_variables',
    description:
      'From an analysis question, the survey variables it likely needs (name, label, data file, the codebook page defining it) and the documentation files to read first, from the variable catalog of the codebooks. Check each candidate in its codebook.',
    parameters: {
      type: 'object',
      properties: { question: { type: 'string', description: 'The question, with any definitions it gives.' } },
      required: ['question'],
    },
    async run(args, ctx) {
      const q = str(args.question)?.trim();
      if (!q) return { observation: 'Error: find_variables needs a question.', isError: true };
      const d = await docs();
      if (typeof d === 'string') return { observation: d, isError: true };
      if (!isDocIndex(d)) {
        return { observation: 'Error: the variable catalog is not available in this run.', isError: true };
      }
      // What the decomposition's model calls used, reported with the tool call also when the call then fails.
      let modelUse: ToolModelUse | undefined;
      try {
        retriever ??= new QuestionRetriever(d, surveyCatalog(d, undefined, d.root).variables);
        let llm: LlmDecomposition | undefined;
        const decompose = opts.decompose;
        if (decompose) {
          try {
            llm = await decomposeWithModel(q, async (system, user) => {
              const c = await decompose(system, user, { signal: ctx.signal });
              modelUse = addModelUse(modelUse, c.usage, c.costUsd);
              return c.text;
            });
          } catch (e) {
            return {
              observation: `Error: the model could not break the question into concepts: ${(e as Error).message}`,
              isError: true,
              ...(modelUse ? { modelUse } : {}),
            };
          }
        }
        const subQueries = llm ? [...llm.measures, ...llm.population] : [];
        const r = retriever.ask(q, {
          top: 8,
          topVariables: 15,
          ...(subQueries.length ? { extraMeasures: subQueries } : {}),
        });
        const lines = llm ? [`Sub-queries from the model's decomposition: ${subQueries.join('; ') || 'none'}`, ''] : [];
        lines.push('Variables (best first):');
        for (const v of r.variables) {
          lines.push(`- ${v.name} (${v.file}): ${v.label ?? ''} — ${v.doc} ${v.page ?? ''} [${v.why}]`);
        }
        lines.push('', 'Documentation files to read:', ...r.files.map((f, i) => `${i + 1}. ${f.file}`));
        return {
          observation: lines.join('\n'),
          data: llm ? { ...r, decomposition: { ...llm, subQueries } } : r,
          ...(modelUse ? { modelUse } : {}),
        };
      } catch (e) {
        return { observation: `Error: ${(e as Error).message}`, isError: true, ...(modelUse ? { modelUse } : {}) };
      }
    },
  };

  const tools: ToolDefinition[] = [
    {
      name: 'prompt',
      description:
        'Shows the task prompt again. With q_id, only the text of that question (its structure and additional info).',
      parameters: {
        type: 'object',
        properties: {
          q_id: {
            type: 'string',
            description: 'A Question ID from the task, e.g. "NHANES_NCHS Data Brief No. 508_q1".',
          },
        },
      },
      async run(args, ctx) {
        const qid = str(args.q_id);
        if (!qid) return { observation: ctx.taskPrompt };
        const start = ctx.taskPrompt.indexOf(`Question ID: ${qid}\n`);
        if (start < 0) {
          return {
            observation: `Error: no question with ID '${qid}'. Valid IDs: ${qs.map((q) => q.longdaId).join(', ')}`,
            isError: true,
          };
        }
        const rest = ctx.taskPrompt.slice(start);
        const ends = [rest.indexOf('\nQuestion ID:', 1), rest.indexOf('\nAvailable data files:')].filter((i) => i > 0);
        return { observation: rest.slice(0, Math.min(...ends, rest.length)).trim() };
      },
    },
    {
      name: 'read_doc',
      description:
        'Reads a documentation file by units (PDF pages, text lines, table rows). Without range_str: the number of units and the first few. With range_str like "1-3,5" (1-based): those units.',
      parameters: {
        type: 'object',
        properties: {
          doc_path: { type: 'string', description: 'Path from "Available documentation files".' },
          range_str: { type: 'string', description: 'e.g. "1-3,5"' },
        },
        required: ['doc_path'],
      },
      run: (args) =>
        docCall(fileOr(str(args.doc_path), 'all files'), (d) =>
          d.readDoc(args.doc_path as string, str(args.range_str), { files: docFiles }),
        ),
    },
    {
      name: 'search_doc',
      description:
        'Case-insensitive exact keyword search in one documentation file (or all when doc_path is omitted). Returns the matching units with surrounding context.',
      parameters: {
        type: 'object',
        properties: {
          keyword: { type: 'string' },
          doc_path: { type: 'string' },
          max_matches: { type: 'integer', minimum: 1 },
          context_chars: { type: 'integer', minimum: 0 },
        },
        required: ['keyword'],
      },
      run: (args) =>
        docCall(fileOr(str(args.doc_path), 'all files'), (d) =>
          d.searchDoc(
            args.keyword as string,
            str(args.doc_path),
            int(args.max_matches) ?? opts.searchMaxMatches ?? 5,
            int(args.context_chars) ?? opts.searchContextChars ?? 150,
            { files: docFiles },
          ),
        ),
    },
    {
      name: 'retriever',
      description:
        'BM25 search over documentation chunks (one file, or all when doc_path is omitted). Returns the best-ranked chunks.',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string' },
          doc_path: { type: 'string' },
          max_matches: { type: 'integer', minimum: 1 },
        },
        required: ['query'],
      },
      run: (args) =>
        docCall('complete index', (d) =>
          d.retrieve(args.query as string, str(args.doc_path), int(args.max_matches) ?? opts.retrieverK ?? 5, {
            files: docFiles,
            mode: opts.retrieverMode ?? 'longta',
          }),
        ),
    },
    ...(opts.findVariables ? [findVariables] : []),
    {
      name: 'notes',
      description:
        'A notebook for this block. action: add (content), view (index, 1-based), update (index, content), list (first 100 characters of each), clear.',
      parameters: {
        type: 'object',
        properties: {
          action: { type: 'string', enum: ['add', 'view', 'update', 'list', 'clear'] },
          content: { type: 'string' },
          index: { type: 'integer' },
        },
        required: ['action'],
      },
      async run(args, ctx) {
        const notes = longdaRunState(ctx.state).notes;
        const idx = int(args.index);
        const badIdx = () => ({
          observation: `Error: index must be between 1 and ${notes.length} (there ${notes.length === 1 ? 'is 1 note' : `are ${notes.length} notes`}).`,
          isError: true,
        });
        switch (args.action) {
          case 'add':
            if (!str(args.content)) return { observation: 'Error: notes(action="add") needs content.', isError: true };
            notes.push(args.content as string);
            return { observation: `Note ${notes.length} added.` };
          case 'view':
            if (idx == null) {
              return { observation: notes.length ? notes.map((n, i) => `${i + 1}. ${n}`).join('\n') : 'No notes yet.' };
            }
            if (idx < 1 || idx > notes.length) return badIdx();
            return { observation: `${idx}. ${notes[idx - 1]}` };
          case 'update':
            if (idx == null || idx < 1 || idx > notes.length) return badIdx();
            if (!str(args.content)) {
              return { observation: 'Error: notes(action="update") needs content.', isError: true };
            }
            notes[idx - 1] = args.content as string;
            return { observation: `Note ${idx} updated.` };
          case 'list':
            return {
              observation: notes.length
                ? notes.map((n, i) => `${i + 1}. ${n.length > 100 ? n.slice(0, 100) + '…' : n}`).join('\n')
                : 'No notes yet.',
            };
          default:
            notes.splice(0);
            return { observation: 'All notes cleared.' };
        }
      },
    },
    {
      name: 'answer',
      description:
        'Records answers. action: add or update (q_id, answer = a number or a list of numbers matching the Expected Answer Structure), view (q_id), list (all answers of this block).',
      parameters: {
        type: 'object',
        properties: {
          action: { type: 'string', enum: ['add', 'update', 'view', 'list'] },
          q_id: { type: 'string' },
          answer: { anyOf: [{ type: 'number' }, { type: 'array', items: { type: 'number' } }, { type: 'string' }] },
        },
        required: ['action'],
      },
      async run(args, ctx) {
        const answers = longdaRunState(ctx.state).answers;
        if (args.action === 'list') {
          if (!answers.size) return { observation: `No answers recorded yet (0 of ${qs.length}).` };
          const lines = qs
            .filter((q) => answers.has(q.longdaId))
            .map((q) => `${q.longdaId}: ${fmtAnswer(answers.get(q.longdaId)!.answer)}`);
          return { observation: `${answers.size} of ${qs.length} answered:\n${lines.join('\n')}` };
        }
        const qid = str(args.q_id);
        if (!qid) return { observation: `Error: answer(action="${String(args.action)}") needs q_id.`, isError: true };
        const q = byId.get(qid);
        if (!q) {
          return {
            observation: `Error: '${qid}' is not a question of this block. Valid IDs: ${qs.map((x) => x.longdaId).join(', ')}`,
            isError: true,
          };
        }
        if (args.action === 'view') {
          const a = answers.get(qid);
          return { observation: a ? `${qid}: ${fmtAnswer(a.answer)}` : `${qid}: not answered yet.` };
        }
        if (args.answer === undefined) {
          return { observation: `Error: answer(action="${String(args.action)}") needs answer.`, isError: true };
        }
        const p = parseAnswerArg(args.answer);
        if (!p.ok) return { observation: `Error: ${p.error}.`, isError: true };
        const s = q.answerStructure;
        if (s.kind === 'single_number' && Array.isArray(p.value)) {
          if (p.value.length !== 1) {
            return {
              observation: `Error: ${qid} expects a single number (Expected Answer Structure: single_number), got a list of ${p.value.length}.`,
              isError: true,
            };
          }
          p.value = p.value[0]!;
        }
        if (s.kind === 'list' && (!Array.isArray(p.value) || p.value.length !== s.length)) {
          const got = Array.isArray(p.value) ? `a list of ${p.value.length}` : 'a single number';
          return {
            observation: `Error: ${qid} expects a list of ${s.length} numbers [${s.labels.join(', ')}], got ${got}.`,
            isError: true,
          };
        }
        const prev = answers.get(qid);
        if (args.action === 'update' && !prev) {
          return { observation: `Error: ${qid} has no answer to update; use action="add".`, isError: true };
        }
        answers.set(qid, { answer: p.value, raw: p.raw, stepIndex: ctx.stepIndex });
        const verb = prev ? `updated (was ${fmtAnswer(prev.answer)})` : 'recorded';
        return {
          observation: `Answer for ${qid} ${verb}: ${fmtAnswer(p.value)}. ${answers.size} of ${qs.length} questions answered.`,
        };
      },
    },
    {
      name: 'save_code',
      description: 'Saves the analysis code that produced your answers (the last call wins).',
      parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
      async run(args, ctx) {
        longdaRunState(ctx.state).savedCode = args.code as string;
        return { observation: `Code saved (${(args.code as string).split('\n').length} lines).` };
      },
    },
    {
      name: 'python',
      description:
        'Runs Python code in a persistent kernel whose working directory is the workspace (variables persist between calls). Returns stdout, the value of the last expression, errors and figures.',
      parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
      async run(args, ctx: ToolContext) {
        const r = await ctx.execute(
          args.code as string,
          opts.pythonTimeoutMs ? { timeoutMs: opts.pythonTimeoutMs } : undefined,
        );
        const body = formatKernelResult({ ...r, restarted: false });
        const note = r.restarted
          ? '[The Python kernel was restarted: all variables, imports and loaded data were lost. Re-run any setup code you need.]\n'
          : '';
        return {
          observation: note + body,
          isError: r.status !== 'ok',
          data: { status: r.status, durationMs: r.durationMs, figures: r.figures?.length ?? 0 },
        };
      },
    },
    {
      name: 'final_answer',
      description: 'Ends the work on this block. Call it after recording every answer you can.',
      parameters: { type: 'object', properties: { summary: { type: 'string' } } },
      async run(_args, ctx) {
        const missing = qs.filter((q) => !longdaRunState(ctx.state).answers.has(q.longdaId)).map((q) => q.longdaId);
        return {
          observation: `Block finished: ${qs.length - missing.length} of ${qs.length} questions answered.${missing.length ? ` Unanswered: ${missing.join(', ')}` : ''}`,
          finish: true,
        };
      },
    },
  ];
  const disabled = new Set((opts.disabledTools ?? []).filter((t) => t !== 'answer'));
  const enabled = tools.filter((t) => !disabled.has(t.name));
  const docIndex = opts.docIndex;
  return {
    id: 'longda',
    tools: enabled,
    // notes, answers and saved code are rows of the store; python runs in the kernel's sandbox (issue 36)
    hostPaths: [],
    runState: LONGDA_RUN_STATE,
    ...(docIndex && enabled.some((t) => DOC_TOOLS.includes(t.name))
      ? {
          prepare({ signal }: { signal: AbortSignal }) {
            lease ??= docIndex();
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
    systemPrompt: SYSTEM_PROMPT,
    buildBlockPrompt: buildLongdaPrompt,
    noToolCallMessage:
      'Your reply contained no tool call. Continue by calling a tool (python, answer, ...); call final_answer when every question is answered.',
    defaultMaxSteps: opts.maxSteps ?? 100,
  };
}
