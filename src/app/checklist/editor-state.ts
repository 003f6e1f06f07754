/**
 * The checklist editor's view model (issue 15): what the editor of one block's expert-authored checklist shows — the
 * latest version's items (else the suite's own, as authored items), the history with what changed between versions,
 * the block's runs to re-score and its database tables for evidence queries. Host-neutral: the VS Code panel
 * (src/vscode/panels/checklist-panel.ts) sends it on the ready handshake.
 */
import {
  activeChecklistItems,
  authoredFromNative,
  checklistStoreOf,
  diffChecklists,
  type ChecklistKey,
} from '../../core/annotations/checklists.ts';
import type { BenchmarkDefinition } from '../../core/benchmarks/types.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { Block, Suite } from '../../core/suites/types.ts';
import type { ChecklistEditorState, EditorItem } from '../../protocol/checklist.ts';

/** The checklist store's key of a block: benchmark kind, suite id, block id. */
export function checklistKeyOf(def: BenchmarkDefinition, suite: Suite, block: Block): ChecklistKey {
  return { suite: def.kind, suiteId: suite.id, blockId: block.id };
}

/**
 * The editor state of a block's checklist, read from the store's checklist versions and its runs of the block (the
 * 50 newest). `def` must have a `checklist` member. `annotator` is the name new versions are saved under.
 * @throws Error when `def` has no checklist.
 */
export async function checklistEditorState(
  store: RunStore,
  def: BenchmarkDefinition,
  suite: Suite,
  block: Block,
  annotator: string,
): Promise<ChecklistEditorState> {
  const spec = def.checklist;
  if (!spec) throw new Error(`${def.title} blocks have no checklist to edit.`);
  const cs = checklistStoreOf(store);
  const versions = await cs.versions(checklistKeyOf(def, suite, block));
  const latest = versions.at(-1);
  const native = spec.nativeItems(block);
  const items = latest ? latest.items : authoredFromNative(native, spec.kind, spec.entityOf(block));
  const runs = (await store.listRuns({ suite: def.kind, blockId: block.id, limit: 50 })).map((r) => ({
    id: r.id,
    model: r.model ?? r.agent,
    status: r.status,
  }));
  return {
    suite: def.kind,
    suiteId: suite.id,
    blockId: block.id,
    blockTitle: block.title,
    benchmarkTitle: def.title,
    kind: spec.kind,
    entity: spec.entityOf(block) ?? null,
    canQuery: !!spec.evidenceQuery && spec.evidenceTables(block) !== null,
    tables: spec.evidenceTables(block) ?? [],
    base: latest?.version ?? null,
    items: items as EditorItem[],
    nativeCount: native.length,
    annotator,
    runs,
    versions: versions.map((v, k) => ({
      version: v.version,
      parent: v.parent,
      author: v.author,
      createdAt: v.createdAt,
      note: v.note,
      hash: v.hash,
      items: activeChecklistItems(v.items).length,
      changes: diffChecklists(k ? versions[k - 1]!.items : [], v.items),
    })),
  };
}
