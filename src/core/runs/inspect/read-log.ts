/**
 * Streaming reader of Inspect AI evaluation logs (log format versions 1–3), both containers: the `.eval` zip (members
 * `header.json`, `samples/<id>_epoch_<n>.json`, `summaries.json`, `reductions.json`, `_journal/…`) read member by member
 * with yauzl, and the `.json` file parsed as a token stream (stream-json) so a log of 10,000 samples is never held
 * whole: the header (every top-level field but `samples`) is assembled in a first pass, then each sample is assembled
 * and handed over one at a time. Attachments (`attachment://<hash>` references into the sample's `attachments` map)
 * are resolved in every string of the sample. Source: Inspect AI `src/inspect_ai/log/_log.py` (`EvalLog`, `EvalSample`)
 * and `log/_recorders/eval.py` (member names), the published schema `inspect-log-schema.json`.
 */
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import yauzl from 'yauzl';
import streamJson from 'stream-json';
import Ignore from 'stream-json/filters/Ignore.js';
import Pick from 'stream-json/filters/Pick.js';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import StreamValues from 'stream-json/streamers/StreamValues.js';
import { LoupeInputError } from '../../util/errors.ts';

/** The log's header: every top-level field of `EvalLog` but `samples` (`version`, `status`, `eval`, `plan`, `results`, `stats`, `error`, …). */
export interface InspectHeader {
  version?: number;
  status?: string;
  eval: Record<string, unknown> & {
    task?: string;
    task_id?: string;
    run_id?: string;
    eval_id?: string;
    model?: string;
    created?: string;
  };
  plan?: { steps?: Array<{ solver?: string; params?: unknown }> } & Record<string, unknown>;
  [k: string]: unknown;
}

/** One `EvalSample` as JSON (attachments resolved); only the fields Loupe reads are typed. */
export interface InspectSample {
  id: string | number;
  epoch: number;
  input: unknown;
  target?: unknown;
  messages: InspectMessage[];
  scores?: Record<
    string,
    { value: unknown; answer?: unknown; explanation?: unknown; metadata?: unknown; history?: unknown[] }
  > | null;
  metadata?: Record<string, unknown>;
  events?: Array<Record<string, unknown>>;
  model_usage?: Record<
    string,
    { input_tokens?: number; output_tokens?: number; total_tokens?: number; input_tokens_cache_read?: number | null }
  >;
  error?: { message?: string; traceback?: string } | null;
  uuid?: string;
  [k: string]: unknown;
}

/** One `ChatMessage` of Inspect (system, user, assistant, tool). */
export interface InspectMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | Array<Record<string, unknown>>;
  id?: string;
  source?: string;
  tool_calls?: Array<{
    id: string;
    function: string;
    arguments: unknown;
    type?: string;
    parse_error?: string | null;
  }> | null;
  tool_call_id?: string | null;
  function?: string | null;
  error?: { type?: string; message?: string } | null;
  metadata?: Record<string, unknown> | null;
  [k: string]: unknown;
}

/** Where a sample was read from (for provenance and messages): the log file and the zip member or `samples[i]`. */
export interface SampleOrigin {
  file: string;
  member: string;
}

/** Largest zip member read (bytes): a member beyond it is refused, naming it. */
export const MAX_MEMBER_BYTES = 512 * 1024 * 1024;

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * Checks the fields of a sample Loupe maps and resolves its attachments.
 * @param raw the parsed sample JSON; `where` names the file and member in errors.
 * @returns the sample with every `attachment://<hash>` string replaced by its content.
 * @throws LoupeInputError naming the file, member and field (e.g. `samples/1_epoch_1.json: messages[2].role`).
 */
export function checkSample(raw: unknown, where: SampleOrigin): InspectSample {
  const at = (field: string, msg: string): LoupeInputError =>
    new LoupeInputError(`${where.file}: ${where.member}: ${field}`, msg);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw at('(sample)', 'is not a JSON object');
  const s = raw as Record<string, unknown>;
  if (typeof s.id !== 'string' && typeof s.id !== 'number') {
    throw at('id', `must be a string or number, got ${JSON.stringify(s.id)?.slice(0, 40)}`);
  }
  if (!Number.isInteger(s.epoch) || (s.epoch as number) < 1) {
    throw at('epoch', `must be a positive integer, got ${JSON.stringify(s.epoch)?.slice(0, 40)}`);
  }
  if (!Array.isArray(s.messages)) throw at('messages', 'must be an array');
  s.messages.forEach((m: unknown, i: number) => {
    if (!m || typeof m !== 'object') throw at(`messages[${i}]`, 'is not an object');
    const mm = m as Record<string, unknown>;
    if (!ROLES.has(mm.role as string)) {
      throw at(
        `messages[${i}].role`,
        `must be one of system, user, assistant, tool; got ${JSON.stringify(mm.role)?.slice(0, 40)}`,
      );
    }
    if (typeof mm.content !== 'string' && !Array.isArray(mm.content)) {
      throw at(`messages[${i}].content`, 'must be a string or a list of content parts');
    }
    if (mm.tool_calls != null) {
      if (!Array.isArray(mm.tool_calls)) throw at(`messages[${i}].tool_calls`, 'must be a list');
      mm.tool_calls.forEach((c: unknown, j: number) => {
        const cc = c as Record<string, unknown> | null;
        if (!cc || typeof cc.id !== 'string' || typeof cc.function !== 'string') {
          throw at(`messages[${i}].tool_calls[${j}]`, 'needs a string id and function');
        }
      });
    }
  });
  if (s.scores != null && (typeof s.scores !== 'object' || Array.isArray(s.scores))) {
    throw at('scores', 'must be an object of scorer name → score');
  }
  const attachments =
    s.attachments && typeof s.attachments === 'object' ? (s.attachments as Record<string, unknown>) : {};
  const resolved = resolveAttachments(s, attachments, where) as InspectSample;
  delete resolved.attachments;
  return resolved;
}

/** Replaces `attachment://<hash>` strings by `attachments[hash]` (deep); an unknown hash stays as is. */
function resolveAttachments(v: unknown, att: Record<string, unknown>, where: SampleOrigin, depth = 0): unknown {
  if (depth > 200) throw new LoupeInputError(`${where.file}: ${where.member}`, 'nested more than 200 levels deep');
  if (typeof v === 'string') {
    if (v.startsWith('attachment://')) {
      const got = att[v.slice('attachment://'.length)];
      return typeof got === 'string' ? got : v;
    }
    return v;
  }
  if (Array.isArray(v)) return v.map((x) => resolveAttachments(x, att, where, depth + 1));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = k === 'attachments' && depth === 0 ? x : resolveAttachments(x, att, where, depth + 1);
    }
    return out;
  }
  return v;
}

function checkHeader(h: unknown, file: string, member: string): InspectHeader {
  if (!h || typeof h !== 'object' || Array.isArray(h)) {
    throw new LoupeInputError(`${file}: ${member}`, 'is not a JSON object');
  }
  const hh = h as Record<string, unknown>;
  if (!hh.eval || typeof hh.eval !== 'object') {
    throw new LoupeInputError(`${file}: ${member}: eval`, 'is missing (not an Inspect log header)');
  }
  const ev = hh.eval as Record<string, unknown>;
  if (typeof ev.task !== 'string') throw new LoupeInputError(`${file}: ${member}: eval.task`, 'must be a string');
  // Version 3 adds the sample's `message_pool` (events refer to pooled messages); a sample's `messages` stay whole.
  if (hh.version !== undefined && hh.version !== 1 && hh.version !== 2 && hh.version !== 3) {
    throw new LoupeInputError(
      `${file}: ${member}: version`,
      `log format version ${String(hh.version)} is not read (1, 2 and 3 are)`,
    );
  }
  return hh as InspectHeader;
}

/** What {@link readInspectLog} calls for each sample, in log order; awaited before the next sample is read. */
export type OnSample = (sample: InspectSample, origin: SampleOrigin) => Promise<void>;

/**
 * Reads an Inspect log, streaming: `onHeader` once, then `onSample` for each sample in order.
 * @param file a `.eval` (zip) or `.json` log path (the user's own file).
 * @throws LoupeInputError naming the file, the member (or `samples[i]`) and the field for a corrupt or foreign log.
 */
export async function readInspectLog(
  file: string,
  onHeader: (h: InspectHeader) => Promise<void>,
  onSample: OnSample,
): Promise<{ samples: number }> {
  if (file.endsWith('.eval')) return readEvalZip(file, onHeader, onSample);
  if (file.endsWith('.json')) return readJsonLog(file, onHeader, onSample);
  throw new LoupeInputError(file, 'is not an Inspect log (.eval or .json)');
}

// ---------------------------------------------------------------- .eval (zip)

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((res, rej) =>
    yauzl.open(
      file,
      { lazyEntries: true, autoClose: false, strictFileNames: true, validateEntrySizes: true },
      (err, zf) => (err ? rej(new LoupeInputError(file, `is not a readable .eval zip: ${err.message}`)) : res(zf)),
    ),
  );
}

async function entriesOf(zf: yauzl.ZipFile): Promise<Map<string, yauzl.Entry>> {
  const out = new Map<string, yauzl.Entry>();
  await new Promise<void>((res, rej) => {
    zf.on('entry', (e: yauzl.Entry) => {
      out.set(e.fileName, e);
      zf.readEntry();
    });
    zf.on('end', () => res());
    zf.on('error', rej);
    zf.readEntry();
  });
  return out;
}

async function readMember(file: string, zf: yauzl.ZipFile, e: yauzl.Entry): Promise<unknown> {
  if (e.uncompressedSize > MAX_MEMBER_BYTES) {
    throw new LoupeInputError(
      `${file}: ${e.fileName}`,
      `is ${e.uncompressedSize} bytes, more than the ${MAX_MEMBER_BYTES} read`,
    );
  }
  const stream = await new Promise<NodeJS.ReadableStream>((res, rej) =>
    zf.openReadStream(e, (err, s) =>
      err ? rej(new LoupeInputError(`${file}: ${e.fileName}`, `cannot be read: ${err.message}`)) : res(s),
    ),
  );
  const chunks: Buffer[] = [];
  try {
    for await (const c of stream) chunks.push(c as Buffer);
  } catch (err) {
    throw new LoupeInputError(`${file}: ${e.fileName}`, `is corrupt: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new LoupeInputError(`${file}: ${e.fileName}`, `is not valid JSON: ${(err as Error).message}`);
  }
}

async function readEvalZip(
  file: string,
  onHeader: (h: InspectHeader) => Promise<void>,
  onSample: OnSample,
): Promise<{ samples: number }> {
  const zf = await openZip(file);
  try {
    let entries: Map<string, yauzl.Entry>;
    try {
      entries = await entriesOf(zf);
    } catch (err) {
      throw new LoupeInputError(file, `is a corrupt zip: ${(err as Error).message}`);
    }
    // header.json is written when the eval ends; a log still running (or killed) has only _journal/start.json.
    const headerName = entries.has('header.json')
      ? 'header.json'
      : entries.has('_journal/start.json')
        ? '_journal/start.json'
        : null;
    if (!headerName) {
      throw new LoupeInputError(file, 'has neither header.json nor _journal/start.json: not an Inspect .eval log');
    }
    const header = checkHeader(await readMember(file, zf, entries.get(headerName)!), file, headerName);
    if (headerName !== 'header.json') header.status = header.status ?? 'started';
    await onHeader(header);
    const names = [...entries.keys()].filter((n) => /^samples\/[^/]+\.json$/.test(n)).sort(sampleOrder);
    for (const name of names) {
      const origin = { file, member: name };
      await onSample(checkSample(await readMember(file, zf, entries.get(name)!), origin), origin);
    }
    return { samples: names.length };
  } finally {
    zf.close();
  }
}

/** Orders `samples/<id>_epoch_<n>.json` by id (numeric when both are), then epoch. */
function sampleOrder(a: string, b: string): number {
  const p = (n: string): [string, number] => {
    const m = /^samples\/(.*)_epoch_(\d+)\.json$/.exec(n);
    return m ? [m[1]!, Number(m[2])] : [n, 0];
  };
  const [ia, ea] = p(a);
  const [ib, eb] = p(b);
  if (ia !== ib) return /^\d+$/.test(ia) && /^\d+$/.test(ib) ? Number(ia) - Number(ib) : ia < ib ? -1 : 1;
  return ea - eb;
}

// ---------------------------------------------------------------- .json (token stream)

async function readJsonLog(
  file: string,
  onHeader: (h: InspectHeader) => Promise<void>,
  onSample: OnSample,
): Promise<{ samples: number }> {
  const name = basename(file);
  // Pass 1: the header, every top-level field but `samples` (skipped token by token, never assembled).
  let header: unknown;
  {
    const src = createReadStream(file);
    const pipe = src
      .pipe(streamJson.parser())
      .pipe(Ignore.ignore({ filter: /^samples$/ }))
      .pipe(StreamValues.streamValues());
    try {
      for await (const v of pipe as AsyncIterable<{ value: unknown }>) header = v.value;
    } catch (err) {
      throw new LoupeInputError(file, `is not valid JSON: ${(err as Error).message}`);
    } finally {
      src.destroy();
    }
  }
  const h = checkHeader(header, file, name);
  await onHeader(h);
  // Pass 2: the samples, one at a time.
  const src = createReadStream(file);
  const pipe = src
    .pipe(streamJson.parser())
    .pipe(Pick.pick({ filter: /^samples$/ }))
    .pipe(StreamArray.streamArray());
  let n = 0;
  try {
    for await (const v of pipe as AsyncIterable<{ key: number; value: unknown }>) {
      const origin = { file, member: `samples[${v.key}]` };
      await onSample(checkSample(v.value, origin), origin);
      n++;
    }
  } catch (err) {
    if (err instanceof LoupeInputError) throw err;
    throw new LoupeInputError(`${file}: samples[${n}]`, `is not valid JSON: ${(err as Error).message}`);
  } finally {
    src.destroy();
  }
  return { samples: n };
}

/**
 * The Inspect log files named by paths: a file as is, a folder's `.eval` / `.json` files (recursively, links not
 * followed, at most `max` files), sorted.
 * @throws LoupeInputError naming a path that does not exist or a folder with more than `max` logs.
 */
export function listInspectLogs(paths: readonly string[], max = 100_000): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    if (depth > 32) return;
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p, depth + 1);
      else if (e.isFile() && /\.(eval|json)$/.test(e.name)) {
        out.push(p);
        if (out.length > max) throw new LoupeInputError(dir, `holds more than ${max} log files`);
      }
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new LoupeInputError(p, 'does not exist');
    }
    if (st.isDirectory()) walk(p, 0);
    else out.push(p);
  }
  return out;
}
