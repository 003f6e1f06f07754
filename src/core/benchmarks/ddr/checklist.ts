/**
 * Authoring DDR checklists: writes an entity's checklist into a `qa.json` in DDR-Bench's format
 * (`{"metadata": {...}, "results": [{"entity_id", "qa_pairs": [{question, answer, source_text}]}]}`,
 * spec §3.2), so blocks that had none can be scored later.
 */
import { existsSync, renameSync, writeFileSync } from 'node:fs';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { readUtf8 } from '../../suites/util.ts';

/** One checklist item to save. */
export interface ChecklistInput {
  question: string;
  answer: string;
  sourceText?: string;
}

/**
 * Sets (replaces) the checklist of one entity in `file`, creating the file when absent. Other
 * entities and the metadata are kept. The write is atomic (temp file + rename).
 * @param file path of `qa.json`. @param entityId the entity. @param items its checklist (may be empty: removes the entity).
 * @returns the number of entities with a checklist after the change.
 * @throws LoupeInputError naming the file when it exists but is not a DDR checklist file, or an item lacks question/answer.
 */
export function saveChecklist(file: string, entityId: string, items: ChecklistInput[]): number {
  items.forEach((it, i) => {
    if (typeof it.question !== 'string' || it.question.trim() === '' || typeof it.answer !== 'string') {
      throw new LoupeInputError(`checklist item ${i + 1}`, 'needs a question and an answer');
    }
  });
  let doc: {
    metadata?: Record<string, unknown>;
    results: { entity_id: string; qa_pairs: { question: string; answer: string; source_text: string }[] }[];
  } = {
    metadata: { created_by: 'loupe' },
    results: [],
  };
  if (existsSync(file)) {
    try {
      doc = JSON.parse(readUtf8(file)) as typeof doc;
    } catch (e) {
      throw new LoupeInputError(file, `cannot update: ${errorMessage(e)}`);
    }
    if (!doc || !Array.isArray(doc.results)) {
      throw new LoupeInputError(file, 'not a DDR checklist file (expected {"results": [...]})');
    }
  }
  const entry = {
    entity_id: entityId,
    qa_pairs: items.map((it) => ({
      question: it.question.trim(),
      answer: it.answer,
      source_text: it.sourceText ?? '',
    })),
  };
  const i = doc.results.findIndex((r) => String(r.entity_id) === entityId);
  if (items.length === 0) {
    if (i >= 0) doc.results.splice(i, 1);
  } else if (i >= 0) doc.results[i] = entry;
  else doc.results.push(entry);
  doc.metadata = { ...(doc.metadata ?? {}), updated_by: 'loupe', updated_at: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(doc, null, 2));
  renameSync(tmp, file);
  return doc.results.length;
}
