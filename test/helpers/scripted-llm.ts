/**
 * A scripted OpenAI-compatible server for tests, integration tests and perf (plain Node, no test runner).
 *
 *   const srv = await startScriptedLlm({ script: [ { toolCalls: [call('prompt', {})] }, (req) => ({ content: 'done' }) ] });
 *   // baseUrl: srv.baseUrl  (http://127.0.0.1:<random>/v1)
 *   await srv.close();
 *
 * Which turn answers a request: the number of assistant messages already in the request (so a conversation
 * resumed by another process continues where it stopped). Conversations are told apart by their first user
 * message; `scriptFor(firstUserMessage)` gives each its own script. A turn may be a function of the request,
 * so it can react to observations. Faults listed on a turn are served, one per request, before the turn
 * itself: 429 (+Retry-After), 500, hang, truncated stream, or any status. Malformed tool JSON and unknown
 * tools are just turns (`rawToolCall('python', '{bad')`, `call('nope', {})`).
 * Endpoints: POST /v1/chat/completions (stream and non-stream, usage), GET /v1/models.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ScriptedToolCall {
  name: string;
  /** An object is JSON-encoded; a string is sent as is (use it for malformed JSON). */
  arguments: string | Record<string, unknown>;
  id?: string;
}

export type Fault =
  | { type: 'rate-limit'; retryAfterSeconds?: number; retryAfterMs?: number }
  | { type: 'server-error'; status?: number }
  | { type: 'status'; status: number; message?: string }
  | { type: 'hang' }
  | { type: 'truncate' };

export interface ScriptedReply {
  content?: string | null;
  reasoning?: string;
  toolCalls?: ScriptedToolCall[];
  finishReason?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
  /** Extra delay for this reply (ms). */
  delayMs?: number;
  /** Streamed replies: pause between chunks (ms), e.g. a slow reasoning model that keeps sending. */
  chunkDelayMs?: number;
}

export interface ChatRequestBody {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { type: string; function: { name: string } }[];
  stream?: boolean;
  [k: string]: unknown;
}

export type TurnFn = (req: ChatRequestBody, info: { turn: number }) => ScriptedReply | Promise<ScriptedReply>;
export type Turn = (ScriptedReply & { faults?: Fault[] }) | TurnFn | { faults: Fault[]; reply: ScriptedReply | TurnFn };

export interface ScriptedLlmOptions {
  script?: Turn[];
  scriptFor?: (firstUserMessage: string) => Turn[];
  /** Delay before every response (ms). */
  latencyMs?: number;
  models?: string[];
  /** Require `Authorization: Bearer <key>` (401 otherwise). */
  requireKey?: string;
}

export interface RecordedRequest {
  body: ChatRequestBody;
  authorization: string | undefined;
  turn: number;
  served: 'reply' | Fault['type'];
}

export interface ScriptedLlm {
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Tool call helper: `call('answer', { action: 'add', q_id, answer: 40.3 })`. */
export function call(name: string, args: Record<string, unknown>, id?: string): ScriptedToolCall {
  return { name, arguments: args, id };
}
/** Tool call with a raw (possibly malformed) argument string. */
export function rawToolCall(name: string, argumentsText: string, id?: string): ScriptedToolCall {
  return { name, arguments: argumentsText, id };
}

/** Rough, deterministic token count (chars / 4). */
function approxTokens(s: string): number {
  return Math.max(1, Math.ceil(s.length / 4));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, obj: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** Starts the server on 127.0.0.1 (random port). */
export async function startScriptedLlm(opts: ScriptedLlmOptions): Promise<ScriptedLlm> {
  const requests: RecordedRequest[] = [];
  const faultCounters = new Map<string, number>();
  const scripts = new Map<string, Turn[]>();
  const sockets = new Set<Socket>();
  let callCounter = 0;

  const scriptOf = (first: string): Turn[] => {
    if (opts.scriptFor) {
      let s = scripts.get(first);
      if (!s) {
        s = opts.scriptFor(first);
        scripts.set(first, s);
      }
      return s;
    }
    return opts.script ?? [];
  };

  async function handleChat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    let body: ChatRequestBody;
    try {
      body = JSON.parse(text) as ChatRequestBody;
    } catch {
      return sendJson(res, 400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } });
    }
    const authorization = req.headers.authorization;
    if (opts.requireKey && authorization !== `Bearer ${opts.requireKey}`) {
      requests.push({ body, authorization, turn: -1, served: 'status' });
      return sendJson(res, 401, {
        error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' },
      });
    }
    const first = body.messages.find((m) => m.role === 'user')?.content ?? '';
    const turn = body.messages.filter((m) => m.role === 'assistant').length;
    const script = scriptOf(first);
    const entry = script[turn];
    let faults: Fault[] = [];
    let reply: ScriptedReply | TurnFn;
    if (entry === undefined) reply = { content: 'SCRIPT EXHAUSTED' };
    else if (typeof entry === 'function') reply = entry;
    else if ('reply' in entry) {
      faults = entry.faults;
      reply = entry.reply;
    } else {
      faults = entry.faults ?? [];
      reply = entry;
    }
    const fkey = `${first}\u0000${turn}`;
    const served = faultCounters.get(fkey) ?? 0;
    const delay = (opts.latencyMs ?? 0) + (typeof reply !== 'function' ? (reply.delayMs ?? 0) : 0);
    if (delay > 0) await new Promise((r) => setTimeout(r, delay));
    if (served < faults.length) {
      faultCounters.set(fkey, served + 1);
      const f = faults[served]!;
      requests.push({ body, authorization, turn, served: f.type });
      return serveFault(f, body, res);
    }
    const r = typeof reply === 'function' ? await reply(body, { turn }) : reply;
    requests.push({ body, authorization, turn, served: 'reply' });
    serveReply(r, body, res);
  }

  function serveFault(f: Fault, body: ChatRequestBody, res: ServerResponse): void {
    switch (f.type) {
      case 'rate-limit': {
        const h: Record<string, string> = {};
        if (f.retryAfterMs != null) h['retry-after-ms'] = String(f.retryAfterMs);
        else h['retry-after'] = String(f.retryAfterSeconds ?? 1);
        return sendJson(res, 429, { error: { message: 'Rate limit reached', type: 'rate_limit_error' } }, h);
      }
      case 'server-error':
        return sendJson(res, f.status ?? 500, { error: { message: 'Internal server error', type: 'server_error' } });
      case 'status':
        return sendJson(res, f.status, {
          error: { message: f.message ?? `status ${f.status}`, type: 'invalid_request_error' },
        });
      case 'hang':
        return; // never answer; the socket is destroyed on close()
      case 'truncate': {
        if (body.stream) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`data: ${JSON.stringify(chunk(body.model, { role: 'assistant', content: 'partial ' }, null))}\n\n`);
          res.end(); // no finish_reason, no [DONE]
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"id":"x","choices":[{"index":0,"message":{"role":"assi');
        }
      }
    }
  }

  function chunk(model: string, delta: unknown, finish: string | null, usage?: unknown): unknown {
    return {
      id: 'chatcmpl-scripted',
      object: 'chat.completion.chunk',
      created: 0,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    };
  }

  function serveReply(r: ScriptedReply, body: ChatRequestBody, res: ServerResponse): void {
    callCounter += 1;
    const toolCalls = (r.toolCalls ?? []).map((t, i) => ({
      id: t.id ?? `call_${callCounter}_${i}`,
      type: 'function' as const,
      function: {
        name: t.name,
        arguments: typeof t.arguments === 'string' ? t.arguments : JSON.stringify(t.arguments),
      },
    }));
    const content = r.content ?? null;
    const finish = r.finishReason ?? (toolCalls.length ? 'tool_calls' : 'stop');
    const promptTokens = r.usage?.prompt_tokens ?? approxTokens(JSON.stringify(body.messages));
    const completionTokens = r.usage?.completion_tokens ?? approxTokens((content ?? '') + JSON.stringify(toolCalls));
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
      prompt_tokens_details: { cached_tokens: r.usage?.cached_tokens ?? 0 },
    };
    if (!body.stream) {
      const message: Record<string, unknown> = { role: 'assistant', content };
      if (toolCalls.length) message.tool_calls = toolCalls;
      if (r.reasoning) message.reasoning_content = r.reasoning;
      return sendJson(res, 200, {
        id: 'chatcmpl-scripted',
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const queued: string[] = [];
    const send = (obj: unknown) => queued.push(`data: ${JSON.stringify(obj)}\n\n`);
    send(chunk(body.model, { role: 'assistant', content: '' }, null));
    if (r.reasoning) send(chunk(body.model, { reasoning_content: r.reasoning }, null));
    if (content) {
      const mid = Math.ceil(content.length / 2);
      send(chunk(body.model, { content: content.slice(0, mid) }, null));
      if (content.length > mid) send(chunk(body.model, { content: content.slice(mid) }, null));
    }
    toolCalls.forEach((tc, index) => {
      const a = tc.function.arguments;
      const mid = Math.ceil(a.length / 2);
      send(
        chunk(
          body.model,
          {
            tool_calls: [
              { index, id: tc.id, type: 'function', function: { name: tc.function.name, arguments: a.slice(0, mid) } },
            ],
          },
          null,
        ),
      );
      if (a.length > mid) {
        send(chunk(body.model, { tool_calls: [{ index, function: { arguments: a.slice(mid) } }] }, null));
      }
    });
    send(chunk(body.model, {}, finish));
    send({
      id: 'chatcmpl-scripted',
      object: 'chat.completion.chunk',
      created: 0,
      model: body.model,
      choices: [],
      usage,
    });
    queued.push('data: [DONE]\n\n');
    const gap = r.chunkDelayMs ?? 0;
    if (!gap) {
      for (const q of queued) res.write(q);
      res.end();
      return;
    }
    let i = 0;
    const next = () => {
      if (i >= queued.length) return void res.end();
      res.write(queued[i++]!);
      setTimeout(next, gap);
    };
    next();
  }

  const server = createServer((req, res) => {
    const url = (req.url ?? '').replace(/\?.*$/, '');
    if (req.method === 'GET' && /^\/v1\/models\/?$/.test(url)) {
      return sendJson(res, 200, {
        object: 'list',
        data: (opts.models ?? ['scripted-model']).map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'loupe-test',
        })),
      });
    }
    if (req.method === 'POST' && /^\/v1\/chat\/completions\/?$/.test(url)) {
      handleChat(req, res).catch((e: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: `scripted server: ${(e as Error).message}` } });
        else res.destroy();
      });
      return;
    }
    sendJson(res, 404, { error: { message: `no route ${req.method} ${url}` } });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
