import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  IpcNotification,
  IpcRequest,
  RpcEndpoint,
  parseMessage,
  type MessageTarget,
  type WireMessage,
} from '../../../src/protocol/ipc.ts';

/** Two endpoints wired back to back, delivering asynchronously like postMessage. */
function pair(timeoutMs = 1000): [RpcEndpoint, RpcEndpoint] {
  const listeners: [((m: unknown) => void)[], ((m: unknown) => void)[]] = [[], []];
  const target = (self: 0 | 1): MessageTarget => ({
    post: (m: WireMessage) => setTimeout(() => listeners[self === 0 ? 1 : 0].forEach((l) => l(structuredClone(m))), 0),
    onMessage: (l) => {
      listeners[self].push(l);
      return { dispose: () => listeners[self].splice(listeners[self].indexOf(l), 1) };
    },
  });
  return [new RpcEndpoint(target(0), timeoutMs), new RpcEndpoint(target(1), timeoutMs)];
}

const Add = new IpcRequest<{ a: number; b: number }, number>('math/add');
const Fail = new IpcRequest<Record<string, never>, void>('math/fail');
const Missing = new IpcRequest<Record<string, never>, void>('nobody/home');
const Ping = new IpcNotification<{ n: number }>('ping/send');

describe('protocol/ipc RpcEndpoint', () => {
  it('correlates concurrent requests by id', async () => {
    const [a, b] = pair();
    b.onRequest(Add, async ({ a: x, b: y }) => {
      await new Promise((r) => setTimeout(r, x));
      return x + y;
    });
    const results = await Promise.all([a.request(Add, { a: 20, b: 1 }), a.request(Add, { a: 1, b: 1 })]);
    assert.deepEqual(results, [21, 2]);
    a.dispose();
    b.dispose();
  });

  it('returns handler errors and unknown methods as rejected promises, not throws', async () => {
    const [a, b] = pair();
    b.onRequest(Fail, () => {
      throw new Error('boom');
    });
    await assert.rejects(a.request(Fail, {}), /boom/);
    await assert.rejects(a.request(Missing, {}), /Method not found: nobody\/home/);
    a.dispose();
    b.dispose();
  });

  it('times out when nobody answers', async () => {
    const a = new RpcEndpoint({ post: () => {}, onMessage: () => ({ dispose() {} }) }, 50);
    await assert.rejects(a.request(Add, { a: 1, b: 2 }), /Timed out after 50 ms.*math\/add/);
    a.dispose();
  });

  it('delivers notifications to every listener', async () => {
    const [a, b] = pair();
    const got: number[] = [];
    b.onNotification(Ping, ({ n }) => got.push(n));
    const sub = b.onNotification(Ping, ({ n }) => got.push(n * 10));
    a.notify(Ping, { n: 1 });
    await new Promise((r) => setTimeout(r, 10));
    sub.dispose();
    a.notify(Ping, { n: 2 });
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(got, [1, 10, 2]);
    a.dispose();
    b.dispose();
  });

  it('ignores values that are not Loupe messages', () => {
    assert.equal(parseMessage(null), undefined);
    assert.equal(parseMessage({ kind: 'request', id: '1', method: 'x/y' }), undefined);
    assert.equal(parseMessage('hello'), undefined);
    assert.ok(parseMessage({ kind: 'notification', method: 'x/y', params: 1 }));
  });
});
