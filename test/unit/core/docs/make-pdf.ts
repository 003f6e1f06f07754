/**
 * Writes tiny PDFs by hand for the document-unit tests: each page is a list of text items placed at
 * (x, y) with Helvetica 12 pt. `encrypt` adds a standard-security /Encrypt dictionary (V1 R2) whose
 * user password is not empty, so a reader without the password must refuse the file.
 */
export interface PdfItem {
  text: string;
  x: number;
  y: number;
}

function esc(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)');
}

export function makePdf(pages: PdfItem[][], opts: { encrypt?: boolean } = {}): Buffer {
  const objs: string[] = [];
  const n = pages.length;
  // 1 catalog, 2 pages, 3 font, then per page: page obj, content obj
  objs[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  const kids = pages.map((_, i) => `${4 + i * 2} 0 R`).join(' ');
  objs[2] = `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`;
  objs[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  pages.forEach((items, i) => {
    const content = items.map((it) => `BT /F1 12 Tf ${it.x} ${it.y} Td (${esc(it.text)}) Tj ET`).join('\n');
    objs[4 + i * 2] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`;
    objs[5 + i * 2] = `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`;
  });
  let encRef = '';
  if (opts.encrypt) {
    const id = objs.length;
    const hex32 = (c: string) => `<${c.repeat(64)}>`;
    objs[id] = `<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O ${hex32('a')} /U ${hex32('b')} >>`;
    encRef = ` /Encrypt ${id} 0 R /ID [<00112233445566778899aabbccddeeff> <00112233445566778899aabbccddeeff>]`;
  }
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let i = 1; i < objs.length; i++) {
    offsets[i] = Buffer.byteLength(out, 'latin1');
    out += `${i} 0 obj\n${objs[i]}\nendobj\n`;
  }
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objs.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objs.length; i++) out += `${String(offsets[i]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length} /Root 1 0 R${encRef} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}
