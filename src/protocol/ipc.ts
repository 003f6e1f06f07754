/**
 * Typed host⇄webview message descriptors, compiled into both the extension and the webview bundles.
 * Method strings are `noun/verb`. Wire format:
 *   request      { kind: 'request', id, method, params }        (either side → other side, expects a response)
 *   response     { kind: 'response', id, ok: true, result } | { kind: 'response', id, ok: false, error }
 *   notification { kind: 'notification', method, params }       (fire and forget)
 * Every inbound message is treated as `unknown` and validated by {@link parseMessage}.
 */

export type Method = `${string}/${string}`;

/** A request with params P and result R. */
export class IpcRequest<P, R> {
  declare readonly _params: P;
  declare readonly _result: R;
  readonly method: Method;
  constructor(method: Method) {
    this.method = method;
  }
}

/** A notification with params P. */
export class IpcNotification<P> {
  declare readonly _params: P;
  readonly method: Method;
  constructor(method: Method) {
    this.method = method;
  }
}

export type ParamsOf<T> = T extends IpcRequest<infer P, unknown> ? P : T extends IpcNotification<infer P> ? P : never;
export type ResultOf<T> = T extends IpcRequest<unknown, infer R> ? R : never;

export interface RequestMessage {
  kind: 'request';
  id: number;
  method: string;
  params: unknown;
}
export interface ResponseMessage {
  kind: 'response';
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}
export interface NotificationMessage {
  kind: 'notification';
  method: string;
  params: unknown;
}
export type WireMessage = RequestMessage | ResponseMessage | NotificationMessage;

/** Validates an inbound value; returns undefined for anything that is not a Loupe message. */
export function parseMessage(raw: unknown): WireMessage | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  if (m.kind === 'request' && typeof m.id === 'number' && typeof m.method === 'string') {
    return m as unknown as RequestMessage;
  }
  if (m.kind === 'response' && typeof m.id === 'number' && typeof m.ok === 'boolean') {
    return m as unknown as ResponseMessage;
  }
  if (m.kind === 'notification' && typeof m.method === 'string') return m as unknown as NotificationMessage;
  return undefined;
}

/** The two operations a transport needs: post a message and subscribe to incoming ones. */
export interface MessageTarget {
  post(message: WireMessage): void;
  onMessage(listener: (raw: unknown) => void): { dispose(): void };
}

type Handler = (params: unknown) => unknown;

/**
 * One end of the channel. Both the host and the webview create one over their transport.
 * Requests are correlated by a counter id and rejected after `timeoutMs` (default 30 s).
 * An unknown method is answered with an error response rather than thrown, so an older webview and
 * a newer host degrade gracefully.
 */
export class RpcEndpoint {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }
  >();
  private readonly requestHandlers = new Map<string, Handler>();
  private readonly notificationHandlers = new Map<string, Set<Handler>>();
  private readonly subscription: { dispose(): void };
  private readonly target: MessageTarget;
  private readonly timeoutMs: number;

  constructor(target: MessageTarget, timeoutMs = 30_000) {
    this.target = target;
    this.timeoutMs = timeoutMs;
    this.subscription = target.onMessage((raw) => this.receive(raw));
  }

  /** Sends a request and resolves with the other side's result. Rejects on error response or timeout. */
  request<P, R>(type: IpcRequest<P, R>, params: P): Promise<R> {
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`Timed out after ${this.timeoutMs} ms waiting for a response to '${type.method}'`));
      }, this.timeoutMs);
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.target.post({ kind: 'request', id, method: type.method, params });
    });
  }

  /** Sends a notification. */
  notify<P>(type: IpcNotification<P>, params: P): void {
    this.target.post({ kind: 'notification', method: type.method, params });
  }

  /** Registers the handler for a request type (one per method). */
  onRequest<P, R>(type: IpcRequest<P, R>, handler: (params: P) => R | Promise<R>): { dispose(): void } {
    this.requestHandlers.set(type.method, handler as Handler);
    return { dispose: () => this.requestHandlers.delete(type.method) };
  }

  /** Adds a listener for a notification type. */
  onNotification<P>(type: IpcNotification<P>, handler: (params: P) => void): { dispose(): void } {
    let set = this.notificationHandlers.get(type.method);
    if (!set) this.notificationHandlers.set(type.method, (set = new Set()));
    set.add(handler as Handler);
    return { dispose: () => set.delete(handler as Handler) };
  }

  dispose(): void {
    this.subscription.dispose();
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new Error('Channel closed'));
    }
    this.pending.clear();
  }

  private receive(raw: unknown): void {
    const msg = parseMessage(raw);
    if (!msg) return;
    if (msg.kind === 'response') {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(msg.error ?? 'Request failed'));
      return;
    }
    if (msg.kind === 'notification') {
      for (const h of this.notificationHandlers.get(msg.method) ?? []) h(msg.params);
      return;
    }
    const handler = this.requestHandlers.get(msg.method);
    if (!handler) {
      this.target.post({ kind: 'response', id: msg.id, ok: false, error: `Method not found: ${msg.method}` });
      return;
    }
    Promise.resolve()
      .then(() => handler(msg.params))
      .then(
        (result) => this.target.post({ kind: 'response', id: msg.id, ok: true, result }),
        (e: unknown) =>
          this.target.post({
            kind: 'response',
            id: msg.id,
            ok: false,
            error: e instanceof Error ? e.message : String(e),
          }),
      );
  }
}
