/** Child process for the crash / concurrency tests: builds an index and prints progress lines. */
import { openDocIndex } from '../../../../src/core/docs/index.ts';

const [root, cacheDir, slow] = process.argv.slice(2) as [string, string, string | undefined];
const idx = await openDocIndex({ root, cacheDir });
const rep = await idx.build({
  onProgress: (p) => {
    if (p.phase === 'extract') {
      process.stdout.write(`progress ${p.done}\n`);
      if (slow) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(slow)); // make the build slow enough to kill
    }
  },
});
process.stdout.write(
  `done ${JSON.stringify({ files: rep.files.length, units: rep.units, chunks: rep.chunks, skipped: rep.skipped.length })}\n`,
);
idx.close();
