/**
 * The webview's side of the channel. Panels are written against `HostApi`, so the same app can run
 * in a plain browser page with a fake host (perf benchmarks, tests) or inside VS Code.
 */
import { RpcEndpoint, type WireMessage } from '../../src/protocol/ipc.ts';
import { WebviewReadyRequest, type PanelKind } from '../../src/protocol/webview.ts';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

export interface HostApi {
  rpc: RpcEndpoint;
  getViewState<T>(): T | undefined;
  setViewState(state: unknown): void;
}

/** Creates the host connection: VS Code's postMessage when available, else `window.parent`. */
export function connectHost(): HostApi {
  const vscodeApi: VsCodeApi | undefined = typeof acquireVsCodeApi === 'function' ? acquireVsCodeApi() : undefined;
  const post = (m: WireMessage) => (vscodeApi ? vscodeApi.postMessage(m) : window.parent.postMessage(m, '*'));
  const rpc = new RpcEndpoint({
    post,
    onMessage: (listener) => {
      const h = (ev: MessageEvent) => listener(ev.data);
      window.addEventListener('message', h);
      return { dispose: () => window.removeEventListener('message', h) };
    },
  });
  let localState: unknown;
  return {
    rpc,
    getViewState: <T>() => (vscodeApi ? vscodeApi.getState() : localState) as T | undefined,
    setViewState: (s) => (vscodeApi ? vscodeApi.setState(s) : (localState = s)),
  };
}

/** Performs the ready handshake and returns the panel's initial state. */
export async function ready<S>(host: HostApi, panel: PanelKind): Promise<S> {
  const { state } = await host.rpc.request(WebviewReadyRequest, { panel });
  return state as S;
}

/**
 * Minimal element builder: h('div', { class: 'x' }, 'text', child). Text is always set as text, never HTML.
 * `style` goes through the CSSOM (`el.style.cssText`): the panels' CSP refuses `style` attributes (issue 38).
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number | boolean | EventListener | undefined> = {},
  ...children: (Node | string | undefined | null | false)[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v);
    else if (k === 'style') el.style.cssText = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== undefined && c !== null && c !== false) el.append(c);
  return el;
}
