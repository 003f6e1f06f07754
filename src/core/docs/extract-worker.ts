/**
 * Worker thread for parallel unit extraction (`DocIndexOptions.extractWorkers` > 1): receives
 * `{ id, name, data, pdfExtractor }`, answers `{ id, doc }` or `{ id, error, input }` (input = a LoupeInputError
 * message without its subject). Source: issue 4 (cold indexing speed).
 */
import { parentPort } from 'node:worker_threads';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { extractUnits } from './units.ts';
import type { PdfExtractor } from './pdf.ts';

parentPort?.on('message', (msg: { id: number; name: string; data: Uint8Array; pdfExtractor?: PdfExtractor }) => {
  extractUnits(msg.name, msg.data, msg.pdfExtractor ? { pdfExtractor: msg.pdfExtractor } : {}).then(
    (doc) => parentPort!.postMessage({ id: msg.id, doc }),
    (e: unknown) =>
      parentPort!.postMessage({
        id: msg.id,
        error:
          e instanceof LoupeInputError
            ? e.message.slice(e.subject.length + 2)
            : `extraction failed: ${errorMessage(e)}`,
      }),
  );
});
