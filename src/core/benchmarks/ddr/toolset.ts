/**
 * DDR-Bench tool set: `get_database_info()`, `describe_table(table)`, `execute_query(sql)` on a
 * database opened read-only by SQLite, and `python(code)` with the database path read-only. The start
 * prompt names only the entity; the run ends on a message starting with `FINISH:` (paper) or containing
 * "FINISH" (code), or on the budget. Every query's touched tables and columns are recorded, and the
 * per-step message-wise insights (I_m) and the final report (I_t) are derived from the run.
 *
 * Source: spec §3.3 (DDR `agent/data_agent.py`, `agent/prompt_manager.py`, `tool_server/sqlite_mcp.py`),
 * §3.7 / §5.3 rows 5 and 7 (termination and empty-insight choices, as named options).
 */
import { moveImportBookkeepingOut } from './import.ts';
import type { Block } from '../../suites/types.ts';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import type {
  AssistantMessage,
  ChatMessage,
  StepRecord,
  ToolContext,
  ToolDefinition,
  ToolResult,
  ToolSet,
  RunParams,
} from '../../agent/types.ts';
import {
  type DbSchema,
  type QueryCaps,
  type ReadonlyDb,
  type TouchedFields,
  SqlRunner,
  databaseInfo,
  defaultQueryCaps,
  describeTable,
  openReadOnlyDatabase,
  readSchema,
  touchedFields,
} from './sql-tool.ts';
import { pyStr, runPythonTool } from '../../agent/kernel-output.ts';

/**
 * Termination rule (spec §5.3 row 5).
 * - `paper`: the assistant message starts with "FINISH:" (after leading whitespace).
 * - `code`: "FINISH" appears anywhere in the message, case-insensitive (the shipped code's rule).
 */
export type DdrFinishRule = 'paper' | 'code';

/**
 * Entities whose run produced no valid message-wise insight (spec §5.3 row 7).
 * - `zero`: the entity stays in the message-wise averages with score 0 (paper).
 * - `drop`: the entity drops out of the message-wise averages (shipped code).
 * Recorded with the run for the evaluator; the agent loop itself does not depend on it.
 */
export type DdrEmptyInsights = 'zero' | 'drop';

/** Options of {@link createDdrToolSet}. */
export interface DdrToolSetOptions {
  finishRule?: DdrFinishRule;
  emptyInsights?: DdrEmptyInsights;
  /** Step budget; default 100 (`agent.max_turns` in DDR's config; the paper states no cap). */
  maxSteps?: number;
  /** Offer `python(code)` next to the SQL tools (default true; the original gives MIMIC only SQL). */
  python?: boolean;
  caps?: Partial<QueryCaps>;
  /** Wall-clock limit per `execute_query` in ms (default 30,000); the query is killed after it. */
  queryTimeoutMs?: number;
}

/** Recorded per `execute_query` call (in the tool result `data` and in `state.extra.ddr.queries`). */
export interface DdrQueryRecord extends TouchedFields {
  stepIndex: number;
  sql: string;
  ok: boolean;
  rows: number;
  truncated: boolean;
  /** `python` when the SQL was a string literal in a python cell (rows unknown: 0), else `execute_query`. */
  via?: 'execute_query' | 'python';
}

/**
 * SQL statements written as string literals in Python code (`pd.read_sql("SELECT ...", con)`,
 * `con.execute('''WITH ...''')`): literals whose text starts with SELECT / WITH / PRAGMA / EXPLAIN.
 * f-string placeholders are kept as written (the parser then falls back to name matching).
 */
export function sqlInPython(code: string): string[] {
  const out: string[] = [];
  const re = /[rRfFbBuU]{0,2}("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')/g;
  for (const m of code.matchAll(re)) {
    const lit = m[1]!;
    const q = lit.startsWith('"""') || lit.startsWith("'''") ? 3 : 1;
    const text = lit.slice(q, lit.length - q).trim();
    if (/^(SELECT|WITH|PRAGMA|EXPLAIN)\b/i.test(text)) out.push(text);
  }
  return out;
}

/** Per-run DDR state under `state.extra.ddr`. */
export interface DdrRunState {
  options: { finishRule: DdrFinishRule; emptyInsights: DdrEmptyInsights };
  queries: DdrQueryRecord[];
}

const DESCRIPTION_TOOLS = new Set(['get_database_info', 'describe_table', 'list_files', 'get_field_description']);

interface OpenDb {
  db: ReadonlyDb;
  schema: DbSchema;
  /** Per run: its query process (runs never share one, so a killed query cannot hit another run). */
  runners: Map<string, SqlRunner>;
}
const openDbs = new Map<string, OpenDb>();

/** Opens (once per path, shared by runs; connections are read-only) the block's database; queries run in a {@link SqlRunner} process. */
function dbFor(block: Block): OpenDb {
  const info = block.visible.database;
  if (!info) throw new LoupeInputError(block.id, 'DDR block has no database');
  let o = openDbs.get(info.path);
  if (!o) {
    moveImportBookkeepingOut(info.path); // issue 36: never hand the agent Loupe's bookkeeping (throws when it stays)
    const db = openReadOnlyDatabase(info.path);
    o = { db, schema: readSchema(db), runners: new Map() };
    openDbs.set(info.path, o);
  }
  return o;
}

/** Closes every database connection the DDR tools opened (CLI exit, tests). */
export function closeDdrDatabases(): void {
  for (const o of openDbs.values()) {
    o.db.close();
    for (const r of o.runners.values()) r.close();
  }
  openDbs.clear();
}

/** Ends the query process of one run (called when the run ends; the next query would start a new one). */
export function closeDdrRun(runId: string): void {
  for (const o of openDbs.values()) {
    o.runners.get(runId)?.close();
    o.runners.delete(runId);
  }
}

/** Reads (creating) the DDR state of a run. */
export function ddrState(extra: Record<string, unknown>, opts: DdrToolSetOptions = {}): DdrRunState {
  const s = extra.ddr as DdrRunState | undefined;
  if (s && Array.isArray(s.queries)) return s;
  const fresh: DdrRunState = {
    options: { finishRule: opts.finishRule ?? 'paper', emptyInsights: opts.emptyInsights ?? 'zero' },
    queries: [],
  };
  extra.ddr = fresh;
  return fresh;
}

/**
 * Does this assistant message end the run? Source: spec §3.3 step 2 and §3.7 item 1.
 * @param content the assistant's text; `rule` see {@link DdrFinishRule}.
 */
export function isDdrFinish(content: string | null | undefined, rule: DdrFinishRule): boolean {
  if (!content) return false;
  return rule === 'paper' ? content.trimStart().startsWith('FINISH:') : content.toUpperCase().includes('FINISH');
}

/** The entity start prompt: names only the entity (spec §3.3 "Entity prompts"). */
export function buildDdrBlockPrompt(block: Block): string {
  const item = block.items.find((i) => i.type === 'ddr-entity');
  if (item?.prompt) return item.prompt;
  const id = block.ddr?.entityId ?? item?.entityId;
  if (!id) throw new LoupeInputError(block.id, 'DDR block names no entity');
  return block.ddr?.entityColumn ? `Analyze the entity with ${block.ddr.entityColumn}=${id}.` : `Analyze entity ${id}.`;
}

function systemPrompt(rule: DdrFinishRule, python: boolean): string {
  return [
    "You are an autonomous data analyst exploring a database on your own. Nobody will ask you questions: decide what to look at, and keep digging into the data about your task's entity.",
    'Rules:',
    '1. Work step by step: in each message, write your reasoning and make a tool call.',
    '2. Make exactly one tool call per message.',
    '3. Start each message with what you learned from the previous result (concrete facts and numbers); use tools only to explore the data.',
    '4. Keep exploring: go from simple lookups to more detailed and more complex queries.',
    '5. Begin by finding out what data is available.',
    python
      ? 'Tools: get_database_info, describe_table and execute_query (SQL on a read-only SQLite database), and python (the database file path is in DB_PATH; open it read-only with sqlite3).'
      : 'Tools: get_database_info, describe_table and execute_query (SQL on a read-only SQLite database).',
    rule === 'paper'
      ? 'FINISHING: when you cannot learn anything more, send a message WITHOUT a tool call that starts with "FINISH:" followed by everything you found about the entity. Only do this when you are done: the session ends there.'
      : 'FINISHING: when you cannot learn anything more, send a message containing "FINISH" followed by everything you found about the entity. Use the word only when you are done: any message containing it ends the session.',
  ].join('\n');
}

/**
 * The DDR tool set.
 * @param opts see {@link DdrToolSetOptions}.
 * @returns a {@link ToolSet} over DDR {@link Block}s (`id` `ddr-sql` or `ddr-sql+python`).
 */
export function createDdrToolSet(opts: DdrToolSetOptions = {}): ToolSet<Block> {
  const rule = opts.finishRule ?? 'paper';
  const withPython = opts.python !== false;
  const caps: QueryCaps = { ...defaultQueryCaps, ...opts.caps };
  const json = (o: unknown) => JSON.stringify(o, null, 2);
  const fail = (msg: string): ToolResult => ({ observation: json({ error: msg }), isError: true });

  const getInfo: ToolDefinition = {
    name: 'get_database_info',
    description: 'List the tables of the database with their descriptions.',
    parameters: { type: 'object', properties: {} },
    run: async (_args, ctx) => {
      ddrState(ctx.state.extra, opts);
      const block = ctx.block as Block;
      const { db } = dbFor(block);
      return { observation: json(databaseInfo(db, block.visible.database?.rel ?? 'database', block.visible.database)) };
    },
  };
  const describe: ToolDefinition = {
    name: 'describe_table',
    description: 'Columns (name, type, description), row count and description of one table.',
    parameters: {
      type: 'object',
      properties: { table: { type: 'string', description: 'Table name.' } },
      required: ['table'],
    },
    run: async (args, ctx) => {
      ddrState(ctx.state.extra, opts);
      try {
        const block = ctx.block as Block;
        return { observation: json(describeTable(dbFor(block).db, String(args.table), block.visible.database)) };
      } catch (e) {
        return fail(errorMessage(e));
      }
    },
  };
  const query: ToolDefinition = {
    name: 'execute_query',
    description: `Run one SQL query on the read-only SQLite database. At most ${caps.maxRows} rows and ${caps.maxChars} characters are returned; a note says when the result was cut.`,
    parameters: {
      type: 'object',
      properties: { sql: { type: 'string', description: 'One SQL statement (SQLite dialect).' } },
      required: ['sql'],
    },
    run: async (args, ctx) => runDdrQuery(String(args.sql), ctx, caps, opts),
  };
  const tools = [getInfo, describe, query];
  if (withPython) {
    tools.push({
      name: 'python',
      description:
        'Run Python code in a persistent kernel (pandas, numpy imported). `DB_PATH` is the database file (read-only); `con` is an open read-only sqlite3 connection.',
      parameters: {
        type: 'object',
        properties: { code: { type: 'string', description: 'Python code to run.' } },
        required: ['code'],
      },
      run: async (args, ctx) => {
        const code = String(args.code);
        const r = await runPythonTool(ctx, 'ddrPreamble', ddrPreamble(ctx.block as Block), code);
        // Exploration metrics also count SQL the agent ran from Python.
        const sqls = sqlInPython(code);
        if (sqls.length) {
          const st = ddrState(ctx.state.extra, opts);
          const { schema } = dbFor(ctx.block as Block);
          for (const sql of sqls) {
            st.queries.push({
              stepIndex: ctx.stepIndex,
              sql,
              ok: !r.isError,
              rows: 0,
              truncated: false,
              via: 'python',
              ...touchedFields(sql, schema),
            });
          }
        }
        return r;
      },
    });
  }
  return {
    id: withPython ? 'ddr-sql+python' : 'ddr-sql',
    tools,
    // queries run in the SQL tool's sandbox, python in the kernel's; insights and the report are rows of the store (issue 36)
    hostPaths: [],
    systemPrompt: systemPrompt(rule, withPython),
    buildBlockPrompt: buildDdrBlockPrompt,
    isTerminal: (msg: AssistantMessage) => isDdrFinish(msg.content, rule),
    // DDR checks for FINISH before looking at tool calls: a FINISH message ends the run as is.
    terminalBeforeTools: true,
    noToolCallMessage:
      rule === 'paper'
        ? 'Your message should either contain a tool call or start with "FINISH:" to end the task.'
        : "Your message should either contain a function call or use 'FINISH' in your message to end the task.",
    defaultMaxSteps: opts.maxSteps ?? 100,
  };
}

/**
 * Runs one `execute_query` call and records the touched tables / columns (even when SQLite rejects
 * the query, so the exploration metrics see what the agent tried).
 */
export async function runDdrQuery(
  sql: string,
  ctx: ToolContext,
  caps: QueryCaps = defaultQueryCaps,
  opts: DdrToolSetOptions = {},
): Promise<ToolResult> {
  const state = ddrState(ctx.state.extra, opts);
  const o = dbFor(ctx.block as Block);
  const timeout = opts.queryTimeoutMs ?? 30_000;
  let runner = o.runners.get(ctx.runId);
  const sandbox = ctx.sandbox ?? 'bubblewrap';
  if (!runner || runner.timeoutMs !== timeout || runner.sandbox !== sandbox) {
    runner?.close();
    runner = new SqlRunner((ctx.block as Block).visible.database!.path, { timeoutMs: timeout, sandbox });
    o.runners.set(ctx.runId, runner);
  }
  const touched = touchedFields(sql, o.schema);
  const rec: DdrQueryRecord = {
    stepIndex: ctx.stepIndex,
    sql,
    ok: false,
    rows: 0,
    truncated: false,
    via: 'execute_query',
    ...touched,
  };
  try {
    const r = await runner.query(sql, caps);
    rec.ok = true;
    rec.rows = r.count;
    rec.truncated = !!r.truncated;
    state.queries.push(rec);
    return { observation: JSON.stringify(r, null, 2), data: { query: rec } };
  } catch (e) {
    state.queries.push(rec);
    return { observation: JSON.stringify({ error: errorMessage(e) }, null, 2), isError: true, data: { query: rec } };
  }
}

/** Python preamble for DDR: `DB_PATH` and a read-only sqlite3 connection `con`. */
export function ddrPreamble(block: Block): string {
  const rel = block.visible.database?.rel ?? block.visible.database?.path ?? '';
  return [
    'import sqlite3, json',
    'import pandas as pd',
    'import numpy as np',
    `DB_PATH = ${pyStr(rel)}`,
    "con = sqlite3.connect('file:' + DB_PATH + '?mode=ro', uri=True)",
    "con.execute('PRAGMA query_only = ON')",
  ].join('\n');
}

// ------------------------------------------------------------------------ insights and report

/** One message-wise insight (I_m). */
export interface DdrInsight {
  stepIndex: number;
  tool: string;
  /** The insight text, or null for "NO INSIGHT" / description-only steps / errors. */
  insight: string | null;
}

/**
 * The prompt that turns one step (reasoning + tool result) into a message-wise insight, as DDR's
 * separate insight call does (spec §3.3 "Message-wise insight prompt"; own wording).
 * @returns chat messages for the same model.
 */
export function ddrInsightMessages(task: string, assistantContent: string, toolResult: string): ChatMessage[] {
  return [
    {
      role: 'system',
      content: 'You are an expert data analyst. Turn one exploration step into a short, factual insight.',
    },
    {
      role: 'user',
      content: [
        `Task: ${task}`,
        '',
        `Reasoning and action:\n${assistantContent}`,
        '',
        `Tool result:\n${toolResult}`,
        '',
        "Write 1–3 sentences stating what this result reveals about the task's entity. Rules:",
        '1. It must be about the task.',
        "2. If the result is an error or shows nothing useful, answer exactly 'NO INSIGHT'.",
        "3. If only description tools were used (get_database_info, describe_table, list_files), answer 'NO INSIGHT'.",
        '4. Answer the question the reasoning raised.',
        '5. Keep every number and statistic.',
      ].join('\n'),
    },
  ];
}

/** "NO INSIGHT" (exactly, after trimming quotes and a period) → null; otherwise the text. */
export function parseDdrInsight(text: string | null | undefined): string | null {
  const t = (text ?? '').trim();
  if (!t) return null;
  if (/^['"]?NO INSIGHT['".]*$/i.test(t)) return null;
  return t;
}

/**
 * Message-wise insights of a finished run without extra model calls: the insight of step k's tool
 * result is the reasoning the agent wrote at step k+1 (rule 3 of the system prompt asks for it), and
 * description-only steps and errors give none. Used when no separate insight call was made.
 * @param steps the run's steps in order.
 */
export function ddrInsightsFromReasoning(steps: StepRecord[]): DdrInsight[] {
  const out: DdrInsight[] = [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i]!;
    const call = s.toolCalls[0];
    if (!call) continue;
    const next = steps[i + 1]?.assistant.content ?? null;
    const useless = call.isError || DESCRIPTION_TOOLS.has(call.name);
    out.push({
      stepIndex: s.index,
      tool: call.name,
      insight: useless ? null : parseDdrInsight(next?.replace(/^FINISH:\s*/, '') ?? null),
    });
  }
  return out;
}

/**
 * The trajectory-wise insight (I_t): the terminal message under the run's rule, else the last
 * assistant message with text (DDR `final_summary`, spec §3.2).
 */
export function ddrFinalReport(steps: StepRecord[], rule: DdrFinishRule = 'paper'): string | null {
  for (let i = steps.length - 1; i >= 0; i--) {
    if (isDdrFinish(steps[i]!.assistant.content, rule)) return steps[i]!.assistant.content!.trim();
  }
  for (let i = steps.length - 1; i >= 0; i--) {
    if (steps[i]!.assistant.content?.trim()) return steps[i]!.assistant.content!.trim();
  }
  return null;
}

/** Exploration summary: distinct tables and `table.column`s touched by all queries of a run. */
export function ddrTouchedSummary(queries: DdrQueryRecord[]): { tables: string[]; columns: string[]; queries: number } {
  const t = new Set<string>();
  const c = new Set<string>();
  for (const q of queries) {
    q.tables.forEach((x) => t.add(x));
    q.columns.forEach((x) => c.add(x));
  }
  return { tables: [...t].sort(), columns: [...c].sort(), queries: queries.length };
}

// ------------------------------------------------------------------------ DDR run driver

/** How message-wise insights are produced (spec §3.3). */
export type DdrInsightMode =
  /** A separate call to the same model after each tool execution (DDR's code and paper). */
  | 'separate-call'
  /** No extra call: the next step's reasoning is the insight ({@link ddrInsightsFromReasoning}). */
  | 'reasoning';

/** A minimal model interface (same shape as the loop's `ModelClient`). */
export interface DdrModel {
  readonly model: string;
  complete(
    messages: ChatMessage[],
    tools: { name: string; description: string; parameters: unknown }[],
    opts?: { signal?: AbortSignal },
  ): Promise<{ message: AssistantMessage; usage: { input: number; output: number; cached: number } }>;
}

/** Where insights are written: the run store's event log (kind `ddr-insight`, JSON message). */
export interface DdrInsightSink {
  addEvent(runId: string, kind: string, message: string): Promise<void>;
  getEvents(runId: string): Promise<{ kind: string; message: string }[]>;
}

/** JSON body of a `ddr-insight` run event. */
export interface DdrInsightEvent extends DdrInsight {
  usage?: { input: number; output: number; cached: number };
}

function lastToolStep(
  messages: ChatMessage[],
): { stepIndex: number; assistant: AssistantMessage; results: string[]; tool: string } | null {
  let assistants = -1;
  let lastIdx = -1;
  for (let i = 0; i < messages.length; i++) {
    if (messages[i]!.role === 'assistant') {
      assistants++;
      lastIdx = i;
    }
  }
  if (lastIdx < 0) return null;
  const assistant = messages[lastIdx] as AssistantMessage;
  if (!assistant.tool_calls?.length) return null;
  const results: string[] = [];
  for (let i = lastIdx + 1; i < messages.length && messages[i]!.role === 'tool'; i++) {
    results.push(String((messages[i] as { content: string }).content));
  }
  if (!results.length) return null;
  return { stepIndex: assistants, assistant, results, tool: assistant.tool_calls[0]!.function.name };
}

/**
 * Wraps the agent's model so that, before each agent call, the previous step's tool result is turned
 * into a message-wise insight with a separate call to the same model (DDR `build_insight_prompt`).
 * Description-only tools and errors get no call ("NO INSIGHT", rule 3). Insights are recorded as run
 * events (`ddr-insight`), once per step (a resumed run does not redo them).
 * @param model the agent's model; `sink` the run store; `runId` the run; `task` the start prompt.
 * @returns a model with the same interface, for `runAgent`.
 */
export function withDdrInsights<M extends DdrModel>(
  model: M,
  sink: DdrInsightSink,
  runId: string,
  task: string,
): M & { flushInsights(messages: ChatMessage[]): Promise<void> } {
  let done: Set<number> | undefined;
  const flush = async (messages: ChatMessage[], signal?: AbortSignal) => {
    done ??= new Set<number>((await readDdrInsights(sink, runId)).map((i) => i.stepIndex));
    const last = lastToolStep(messages);
    if (!last || done.has(last.stepIndex)) return;
    done.add(last.stepIndex);
    const ev: DdrInsightEvent = { stepIndex: last.stepIndex, tool: last.tool, insight: null };
    const isErr = last.results.every((r) => /^\s*\{\s*"error"/.test(r) || /^\[Error\]/m.test(r));
    if (!DESCRIPTION_TOOLS.has(last.tool) && !isErr) {
      const content = [
        last.assistant.content ?? '',
        ...last.assistant.tool_calls!.map((c) => `TOOL_CALL ${c.function.name}(${c.function.arguments})`),
      ].join('\n');
      try {
        const r = await model.complete(ddrInsightMessages(task, content, last.results.join('\n')), [], { signal });
        ev.insight = parseDdrInsight(r.message.content);
        ev.usage = r.usage;
      } catch (e) {
        ev.insight = null;
        await sink.addEvent(runId, 'warning', `insight call for step ${last.stepIndex} failed: ${errorMessage(e)}`);
      }
    }
    await sink.addEvent(runId, 'ddr-insight', JSON.stringify(ev));
  };
  const wrapped = Object.create(model) as M & { flushInsights(messages: ChatMessage[]): Promise<void> };
  wrapped.complete = async (
    messages: ChatMessage[],
    tools: Parameters<M['complete']>[1],
    opts?: Parameters<M['complete']>[2],
  ) => {
    await flush(messages, opts?.signal);
    return model.complete(messages, tools, opts);
  };
  Object.defineProperty(wrapped, 'model', { get: () => model.model });
  wrapped.flushInsights = (messages) => flush(messages);
  return wrapped;
}

/** The message-wise insights recorded for a run (from `ddr-insight` events), in step order. */
export async function readDdrInsights(
  sink: Pick<DdrInsightSink, 'getEvents'>,
  runId: string,
): Promise<DdrInsightEvent[]> {
  const out = (await sink.getEvents(runId))
    .filter((e) => e.kind === 'ddr-insight')
    .map((e) => JSON.parse(e.message) as DdrInsightEvent);
  const byStep = new Map<number, DdrInsightEvent>();
  for (const i of out) byStep.set(i.stepIndex, i);
  return [...byStep.values()].sort((a, b) => a.stepIndex - b.stepIndex);
}

/**
 * The forced final summary DDR makes when the budget ends a run without FINISH (spec §3.3 step 6):
 * one call with the whole conversation rendered as text. Returns "FINISH: <summary>".
 */
export async function ddrForcedSummary(model: DdrModel, messages: ChatMessage[]): Promise<string> {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    if (m.role === 'assistant') {
      lines.push(`ASSISTANT: ${m.content ?? ''}`);
      for (const c of m.tool_calls ?? []) lines.push(`TOOL_CALL: ${c.function.name}(${c.function.arguments})`);
    } else if (m.role === 'tool') lines.push(`TOOL_RESULT: ${m.content}`);
    else lines.push(`${m.role.toUpperCase()}: ${m.content}`);
  }
  const r = await model.complete(
    [
      {
        role: 'system',
        content: 'You are an expert data analyst. Write comprehensive final summaries of data explorations.',
      },
      {
        role: 'user',
        content: `Here is an exploration session that ran out of turns:\n\n${lines.join('\n')}\n\nSummarise everything it found about the task's entity, with all numbers, as one message starting with "FINISH:".`,
      },
    ],
    [],
  );
  const text = (r.message.content ?? '').trim();
  return text.startsWith('FINISH:') ? text : `FINISH: ${text}`;
}

/** Everything DDR's evaluation needs from one run (recorded as the `ddr-result` run event). */
export interface DdrRunResult {
  options: { finishRule: DdrFinishRule; emptyInsights: DdrEmptyInsights; insights: DdrInsightMode };
  /** I_t. */
  finalReport: string | null;
  /** `finish` (terminal message), `forced-summary` (budget), `last-message`, or `none`. */
  finalReportSource: 'finish' | 'forced-summary' | 'last-message' | 'none';
  /** I_m, one entry per tool step. */
  insights: DdrInsight[];
  touched: { tables: string[]; columns: string[]; queries: number };
}

/** What {@link finishDdrRun} reads from and writes to (the run store). */
export interface DdrRunStoreView extends DdrInsightSink {
  getSteps(runId: string): Promise<StepRecord[]>;
  getExtraState(runId: string): Promise<Record<string, unknown>>;
  getRun(runId: string): Promise<{ status: string; params: RunParams } | undefined>;
}

/**
 * Completes a DDR run after the loop: when the run ended without a terminal message and `model` is
 * given, makes DDR's forced final summary (spec §3.3 step 6); collects I_t, I_m (insight events, or
 * the reasoning-derived insights in `reasoning` mode) and the touched fields; records all of it as
 * the run event `ddr-result` (JSON) and returns it.
 * @param messages the conversation (needed only for the forced summary).
 */
export async function finishDdrRun(
  store: DdrRunStoreView,
  runId: string,
  opts: {
    finishRule?: DdrFinishRule;
    emptyInsights?: DdrEmptyInsights;
    insights?: DdrInsightMode;
    model?: DdrModel;
    messages?: ChatMessage[];
  } = {},
): Promise<DdrRunResult> {
  const rule = opts.finishRule ?? 'paper';
  const steps = await store.getSteps(runId);
  const extra = await store.getExtraState(runId);
  const st = ddrState(extra, opts);
  const terminal = [...steps].reverse().find((s) => isDdrFinish(s.assistant.content, rule));
  let finalReport: string | null = terminal?.assistant.content?.trim() ?? null;
  let source: DdrRunResult['finalReportSource'] = terminal ? 'finish' : 'none';
  if (!terminal && opts.model && opts.messages) {
    try {
      finalReport = await ddrForcedSummary(opts.model, opts.messages);
      source = 'forced-summary';
    } catch (e) {
      await store.addEvent(runId, 'warning', `forced final summary failed: ${errorMessage(e)}`);
    }
  }
  if (!finalReport) {
    finalReport = ddrFinalReport(steps, rule);
    source = finalReport ? 'last-message' : 'none';
  }
  const mode = opts.insights ?? 'separate-call';
  const recorded = await readDdrInsights(store, runId);
  const insights: DdrInsight[] =
    mode === 'reasoning' || !recorded.length
      ? ddrInsightsFromReasoning(steps)
      : recorded.map(({ stepIndex, tool, insight }) => ({ stepIndex, tool, insight }));
  const result: DdrRunResult = {
    options: { finishRule: rule, emptyInsights: opts.emptyInsights ?? st.options.emptyInsights, insights: mode },
    finalReport,
    finalReportSource: source,
    insights,
    touched: ddrTouchedSummary(st.queries),
  };
  await store.addEvent(runId, 'ddr-result', JSON.stringify(result));
  return result;
}

/** The last `ddr-result` recorded for a run, or null. */
export async function readDdrResult(
  store: Pick<DdrInsightSink, 'getEvents'>,
  runId: string,
): Promise<DdrRunResult | null> {
  const ev = (await store.getEvents(runId)).filter((e) => e.kind === 'ddr-result').pop();
  return ev ? (JSON.parse(ev.message) as DdrRunResult) : null;
}
