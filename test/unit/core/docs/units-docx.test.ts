import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import JSZip from 'jszip';
import { extractUnits, unitKindFor } from '../../../../src/core/docs/units.ts';

async function docx(body: string): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file('[Content_Types].xml', '<?xml version="1.0"?><Types/>');
  zip.file('word/document.xml', `<?xml version="1.0"?><w:document xmlns:w="w"><w:body>${body}</w:body></w:document>`);
  return zip.generateAsync({ type: 'uint8array' });
}

describe('documentation units: Word documents (issue 49: design documentation shipped as .docx)', () => {
  it('reads one unit per paragraph, runs joined, tabs as spaces, entities decoded, empty paragraphs dropped', async () => {
    assert.equal(unitKindFor('x/Replicate_Weights.docx'), 'Line');
    const data = await docx(
      '<w:p><w:r><w:t>Replicate </w:t></w:r><w:r><w:t>weights</w:t></w:r></w:p><w:p></w:p>' +
        '<w:p><w:r><w:t>PWWGT1</w:t><w:tab/><w:t>to PWWGT160 &amp; A&#x2013;B</w:t></w:r></w:p>',
    );
    const r = await extractUnits('CPS/docs/Replicate_Weights.docx', data);
    assert.equal(r.kind, 'Line');
    assert.deepEqual(r.units, ['Replicate weights', 'PWWGT1 to PWWGT160 & A–B']);
  });

  it('names the file when it is not a Word package', async () => {
    await assert.rejects(
      extractUnits('S/docs/broken.docx', new Uint8Array([1, 2, 3])),
      /S\/docs\/broken\.docx.*not a readable \.docx/,
    );
    const zip = new JSZip();
    zip.file('other.xml', '<x/>');
    await assert.rejects(
      extractUnits('S/docs/empty.docx', await zip.generateAsync({ type: 'uint8array' })),
      /no word\/document\.xml/,
    );
  });
});
