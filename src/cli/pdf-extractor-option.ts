import { parsePdfExtractor, type PdfExtractor } from '../core/docs/index.ts';

/**
 * The `--pdf-extractor` option of the commands that open a documentation index, as `openDocIndex` options.
 * @param value the option's value, undefined when not given (the index's default, PDFium).
 * @throws LoupeInputError naming `--pdf-extractor` and the valid names for anything else.
 */
export function pdfExtractorOption(value: string | undefined): { pdfExtractor?: PdfExtractor } {
  return value === undefined ? {} : { pdfExtractor: parsePdfExtractor(value, '--pdf-extractor') };
}
