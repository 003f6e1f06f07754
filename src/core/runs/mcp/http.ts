/**
 * The streamable-HTTP transport of `loupe mcp` (issue 24): binds 127.0.0.1 only, requires a random token (bearer
 * header, or a `token` query parameter for clients that cannot set headers), and validates `Host` and `Origin` against
 * DNS rebinding as the MCP specification requires (2025-06-18, Transports §Security Warning). Each MCP session is one
 * {@link McpBlockSession} and one recorded run; a dropped connection is resumed by sending the session id again.
 * Source: issue 24; MCP specification 2025-06-18 "Streamable HTTP".
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { nullLogger, type Logger } from '../../util/log.ts';
import type { McpBlockSession } from './session.ts';

/** Inputs of {@link startMcpHttpServer}. */
export interface McpHttpOptions {
  /** TCP port on 127.0.0.1 (0 or absent: a free port). */
  port?: number;
  /** The access token (default: 32 random bytes, base64url). */
  token?: string;
  /** Makes the session (server + run) of a new MCP session. */
  newSession(): McpBlockSession;
  log?: Logger;
  /** Largest request body accepted (bytes, default 16 MiB). */
  maxBodyBytes?: number;
}

/** A running HTTP endpoint. */
export interface McpHttpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  port: number;
  token: string;
  /** Live sessions by MCP session id. */
  sessions: Map<string, McpBlockSession>;
  /** Stops accepting connections and stops every session's run (resumable). */
  close(): Promise<void>;
}

function deny(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

function sameToken(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Starts the HTTP endpoint on 127.0.0.1.
 * @returns the URL, port and token (print them for the client), the live sessions and `close`.
 * @throws Error when the port is taken.
 */
export async function startMcpHttpServer(o: McpHttpOptions): Promise<McpHttpServer> {
  const log = o.log ?? nullLogger;
  const token = o.token ?? randomBytes(32).toString('base64url');
  const maxBody = o.maxBodyBytes ?? 16 * 1024 * 1024;
  const live = new Map<string, { transport: StreamableHTTPServerTransport; session: McpBlockSession }>();
  const sessions = new Map<string, McpBlockSession>();
  let port = 0;

  const readBody = (req: IncomingMessage): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let n = 0;
      req.on('data', (c: Buffer) => {
        n += c.length;
        if (n > maxBody) {
          reject(new Error(`request body over ${maxBody} bytes`));
          req.destroy();
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => {
        try {
          resolve(chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined);
        } catch {
          reject(new Error('the request body is not JSON'));
        }
      });
      req.on('error', reject);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // DNS rebinding: the Host must name this loopback endpoint, and a browser's Origin must be this endpoint.
    const allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.has(host)) {
      return deny(res, 403, `Forbidden: Host '${host}' is not this server (DNS rebinding protection)`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedHosts.has(origin.toLowerCase().replace(/^http:\/\//, ''))) {
      return deny(res, 403, `Forbidden: Origin '${origin}' is not allowed (DNS rebinding protection)`);
    }
    if (url.pathname !== '/mcp') return deny(res, 404, 'Not found: the MCP endpoint is /mcp');
    const auth = req.headers.authorization;
    const given = auth?.toLowerCase().startsWith('bearer ')
      ? auth.slice(7).trim()
      : (url.searchParams.get('token') ?? undefined);
    if (!sameToken(given, token)) {
      return deny(
        res,
        401,
        'Unauthorized: give the token loupe mcp printed (Authorization: Bearer TOKEN, or ?token=TOKEN)',
        { 'www-authenticate': 'Bearer' },
      );
    }

    const sid = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sid) ? sid[0] : sid;
    const body = req.method === 'POST' ? await readBody(req).catch((e: Error) => e) : undefined;
    if (body instanceof Error) return deny(res, 400, `Bad request: ${body.message}`);
    if (sessionId) {
      const s = live.get(sessionId);
      if (!s) {
        return deny(
          res,
          404,
          `Not found: no session '${sessionId}' (it ended, or the server restarted: start a new session; a stopped run continues with loupe mcp --resume RUN)`,
        );
      }
      return s.transport.handleRequest(req, res, body);
    }
    if (req.method !== 'POST' || !(Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body))) {
      return deny(res, 400, 'Bad request: no session id; start a session with an initialize request');
    }
    const session = o.newSession();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        live.set(id, { transport, session });
        sessions.set(id, session);
      },
      onsessionclosed: (id) => {
        live.delete(id);
        sessions.delete(id);
        session.stop('the MCP client ended the session');
      },
    });
    await session.server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      log.error(`MCP HTTP request failed: ${(e as Error).message}`);
      if (!res.headersSent) deny(res, 500, 'Internal error');
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    token,
    sessions,
    async close() {
      for (const { transport, session } of live.values()) {
        session.stop('the Loupe MCP server stopped');
        await transport.close().catch(() => undefined);
      }
      await Promise.all([...live.values()].map((s) => s.session.done));
      live.clear();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
