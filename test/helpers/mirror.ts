/**
 * A local HTTP server (127.0.0.1 only) that serves $LOUPE_SHARED/data in the upstream URL layout of
 * the benchmark sources (GitHub raw, Hugging Face resolve, PhysioNet files), for `loupe fetch --mirror`.
 * Supports HTTP Range; test knobs: ignore Range, corrupt a path, cut a response short once.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { sharedDir } from './shared.ts';

export interface Mirror {
  url: string;
  requests: { path: string; range?: string }[];
  /** URL path → bytes to serve instead of the real file. */
  corrupt: Map<string, Buffer>;
  /** URL paths whose next response is cut after half the bytes (then served normally). */
  cutOnce: Set<string>;
  ignoreRange: boolean;
  close(): Promise<void>;
}

/** Maps an upstream URL path to a file under shared/data, or undefined. */
export function upstreamToShared(path: string): string | undefined {
  const data = join(sharedDir(), 'data');
  const p = decodeURIComponent(path);
  const rules: [RegExp, (m: RegExpExecArray) => string][] = [
    [/^\/behavioral-data\/BLADE\/[^/]+\/blade_bench\/datasets\/LICENSE$/, () => 'blade/LICENSE'],
    [/^\/behavioral-data\/BLADE\/[^/]+\/blade_bench\/datasets\/(.+)$/, (m) => `blade/datasets/${m[1]}`],
    [
      /^\/datasets\/EvilBench\/LongDA\/resolve\/[^/]+\/benchmark\/([^/]+)\/pubs\/(.+)$/,
      (m) => `longda/publications/${m[1]}/pubs/${m[2]}`,
    ],
    [/^\/datasets\/EvilBench\/LongDA\/resolve\/[^/]+\/benchmark\/(.+)$/, (m) => `longda/benchmark/${m[1]}`],
    [/^\/thinkwee\/DDR_Bench\/[^/]+\/data\/([^/]+)\/(.+)$/, (m) => `ddr/${m[1]}/${m[2]}`],
    [/^\/thinkwee\/DDR_Bench\/[^/]+\/scripts\/([a-z0-9]+)_metadata\.json$/, (m) => `ddr/${m[1]}/metadata.json`],
    [/^\/files\/mimic-iv-demo\/[^/]+\/(.+)$/, (m) => `mimic-iv-demo/${m[1]}`],
  ];
  for (const [re, f] of rules) {
    const m = re.exec(p);
    if (m) {
      const file = join(data, f(m));
      if (file.includes('..')) return undefined;
      return existsSync(file) && statSync(file).isFile() ? file : undefined;
    }
  }
  return undefined;
}

/** Starts the mirror on an ephemeral port of 127.0.0.1. */
export async function startMirror(): Promise<Mirror> {
  const state = {
    requests: [] as Mirror['requests'],
    corrupt: new Map<string, Buffer>(),
    cutOnce: new Set<string>(),
    ignoreRange: false,
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const range = req.headers.range;
    state.requests.push({ path, ...(range ? { range } : {}) });
    const file = upstreamToShared(path);
    if (!file) {
      res.writeHead(404).end('not found');
      return;
    }
    const bytes = state.corrupt.get(path) ?? readFileSync(file);
    const m = range && !state.ignoreRange ? /^bytes=(\d+)-$/.exec(range) : null;
    let start = 0;
    if (m) {
      start = Number(m[1]);
      if (start >= bytes.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` }).end();
        return;
      }
      res.writeHead(206, {
        'Content-Length': bytes.length - start,
        'Content-Range': `bytes ${start}-${bytes.length - 1}/${bytes.length}`,
        'Accept-Ranges': 'bytes',
      });
    } else res.writeHead(200, { 'Content-Length': bytes.length, 'Accept-Ranges': 'bytes' });
    const body = bytes.subarray(start);
    if (state.cutOnce.has(path)) {
      state.cutOnce.delete(path);
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => setTimeout(() => res.destroy(), 30));
      return;
    }
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    corrupt: state.corrupt,
    cutOnce: state.cutOnce,
    get ignoreRange() {
      return state.ignoreRange;
    },
    set ignoreRange(v: boolean) {
      state.ignoreRange = v;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
