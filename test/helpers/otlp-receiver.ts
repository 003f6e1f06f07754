/**
 * An OTLP/HTTP trace receiver for tests: listens on 127.0.0.1 (random port), decodes every POST body with the
 * OpenTelemetry proto definitions (the protobufjs root generated from opentelemetry-proto, npm
 * `@opentelemetry/otlp-proto-exporter-base`, installed as `otlp-proto-root`), never by hand, and keeps the spans.
 *
 *   const rx = await startOtlpReceiver();   // rx.url: http://127.0.0.1:<port>
 *   ... export to rx.url ...
 *   rx.spans  // decoded spans, ids as hex, times as bigint nanoseconds, attributes as plain values
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('otlp-proto-root/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
};
interface ProtoType {
  decode(b: Uint8Array): unknown;
  toObject(m: unknown, o: Record<string, unknown>): unknown;
}
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

type AnyValue = {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value: AnyValue };

/** A plain value of an OTLP AnyValue. */
function plain(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(plain);
  return undefined;
}
const attrs = (kvs: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, plain(kv.value)]));
const hex = (b64: string | undefined): string => (b64 ? Buffer.from(b64, 'base64').toString('hex') : '');

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind number (1 internal, 3 client). */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: { name: string; timeNs: bigint; attributes: Record<string, unknown> }[];
  status: { code: number; message: string };
  resource: Record<string, unknown>;
  scope: { name: string; version: string; schemaUrl: string };
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** Every request: its path, headers and raw body (decoded or not). */
  requests: { path: string; headers: IncomingMessage['headers']; body: Buffer }[];
  close(): Promise<void>;
}

/** Starts the receiver; it answers 200 with an empty ExportTraceServiceResponse (0 bytes). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      requests.push({ path: req.url ?? '', headers: req.headers, body });
      if (
        req.method !== 'POST' ||
        req.url !== '/v1/traces' ||
        req.headers['content-type'] !== 'application/x-protobuf'
      ) {
        res.writeHead(404).end();
        return;
      }
      const msg = Request.toObject(Request.decode(body), { longs: String, bytes: String, defaults: false }) as {
        resourceSpans?: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans?: {
            scope?: { name?: string; version?: string };
            schemaUrl?: string;
            spans?: {
              traceId?: string;
              spanId?: string;
              parentSpanId?: string;
              name: string;
              kind?: number;
              startTimeUnixNano: string;
              endTimeUnixNano: string;
              attributes?: KeyValue[];
              events?: { name: string; timeUnixNano: string; attributes?: KeyValue[] }[];
              status?: { code?: number; message?: string };
            }[];
          }[];
        }[];
      };
      for (const rs of msg.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: hex(s.traceId),
              spanId: hex(s.spanId),
              parentSpanId: hex(s.parentSpanId),
              name: s.name,
              kind: s.kind ?? 0,
              startNs: BigInt(s.startTimeUnixNano),
              endNs: BigInt(s.endTimeUnixNano),
              attributes: attrs(s.attributes),
              events: (s.events ?? []).map((e) => ({
                name: e.name,
                timeNs: BigInt(e.timeUnixNano),
                attributes: attrs(e.attributes),
              })),
              status: { code: s.status?.code ?? 0, message: s.status?.message ?? '' },
              resource: attrs(rs.resource?.attributes),
              scope: { name: ss.scope?.name ?? '', version: ss.scope?.version ?? '', schemaUrl: ss.schemaUrl ?? '' },
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 }).end();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
