/**
 * Saved run filters (issue 43), host-neutral: the built-in ones ("runs with a tool error", "unscored runs", "pending
 * items for me") and those users saved in the store (`ExperimentStore.saveFilter`), applied to a list of runs the same
 * way by the Runs view and `loupe runs --filter`.
 */
import { queueAssignmentStoreOf } from '../../core/annotations/queues.ts';
import { experimentStoreOf, type RunFilterSpec, type RunLabels } from '../../core/store/experiments.ts';
import type { RunRecord } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';

/** A built-in filter. */
export interface BuiltinFilter {
  id: string;
  title: string;
  description: string;
}

/** The built-in filters, in the order pickers offer them. */
export const BUILTIN_FILTERS: readonly BuiltinFilter[] = [
  { id: 'tool-error', title: 'Runs with a tool error', description: 'at least one tool call of the run failed' },
  { id: 'unscored', title: 'Unscored runs', description: 'ended runs with no stored score' },
  {
    id: 'pending-for-me',
    title: 'Pending items for me',
    description: 'runs with annotation items assigned to you that you have not labelled',
  },
];

/** A filter as pickers list it: built in, or saved by someone. */
export interface FilterChoice {
  name: string;
  spec: RunFilterSpec;
  builtin: boolean;
  description: string;
}

/** Every filter on offer: the built-in ones, then the saved ones (by name). Saved ones are skipped when unreadable. */
export async function filterChoices(store: RunStore): Promise<FilterChoice[]> {
  let saved: FilterChoice[] = [];
  try {
    saved = (await experimentStoreOf(store).filters()).map((f) => ({
      name: f.name,
      spec: f.spec,
      builtin: false,
      description: describeFilter(f.spec) + ` — saved by ${f.author}`,
    }));
  } catch {
    // a store engine without experiments (tests' memory store): built-ins only
  }
  return [
    ...BUILTIN_FILTERS.map((b) => ({
      name: b.title,
      spec: { builtin: b.id },
      builtin: true,
      description: b.description,
    })),
    ...saved,
  ];
}

/** A filter spec in words: `tag ablation-A, status failed`. */
export function describeFilter(spec: RunFilterSpec): string {
  const parts: string[] = [];
  if (spec.builtin) {
    parts.push(
      BUILTIN_FILTERS.find((b) => b.id === spec.builtin)?.title.toLowerCase() ?? `unknown filter ${spec.builtin}`,
    );
  }
  if (spec.tag) parts.push(`tag ${spec.tag}`);
  if (spec.suite) parts.push(`benchmark ${spec.suite}`);
  if (spec.status) parts.push(`status ${spec.status}`);
  if (spec.text) parts.push(`“${spec.text}”`);
  return parts.join(', ');
}

/** What a filter needs besides the runs. */
export interface FilterContext {
  /** Who "me" is (the annotator name), for "pending items for me". */
  annotator: string;
  /** Labels of the runs, when the caller has them already. */
  labels?: ReadonlyMap<string, RunLabels>;
}

const ENDED = new Set(['finished', 'failed', 'cancelled', 'budget_exhausted']);

/**
 * The runs of a list a filter keeps (same order).
 * @throws Error naming the filter when its built-in id is unknown (a colleague's newer Loupe saved it).
 */
export async function applyRunFilter(
  store: RunStore,
  runs: readonly RunRecord[],
  spec: RunFilterSpec,
  ctx: FilterContext,
): Promise<RunRecord[]> {
  let out = [...runs];
  if (spec.suite) out = out.filter((r) => r.suite === spec.suite);
  if (spec.status) out = out.filter((r) => r.status === spec.status);
  if (spec.tag || spec.text) {
    const labels = ctx.labels ?? (await experimentStoreOf(store).labelsOf(out.map((r) => r.id)));
    if (spec.tag) out = out.filter((r) => labels.get(r.id)?.tags.includes(spec.tag!));
    if (spec.text) {
      const t = spec.text.toLowerCase();
      out = out.filter((r) =>
        [labels.get(r.id)?.name ?? '', r.model ?? '', r.agent, r.id].some((s) => s.toLowerCase().includes(t)),
      );
    }
  }
  switch (spec.builtin) {
    case undefined:
      return out;
    case 'tool-error': {
      const keep: RunRecord[] = [];
      for (const r of out) {
        if (r.steps > 0 && (await store.getStepSummaries(r.id)).some((s) => s.anyError)) keep.push(r);
      }
      return keep;
    }
    case 'unscored': {
      const scored = new Set((await store.scores.list().catch(() => [])).map((s) => s.runId));
      return out.filter((r) => ENDED.has(r.status) && !scored.has(r.id));
    }
    case 'pending-for-me': {
      let pending: Array<{ runId: string | null }>;
      try {
        pending = await queueAssignmentStoreOf(store).pendingFor(ctx.annotator);
      } catch {
        pending = [];
      }
      const ids = new Set(pending.map((p) => p.runId).filter((x): x is string => !!x));
      return out.filter((r) => ids.has(r.id));
    }
    default:
      throw new Error(`filter ${spec.builtin} is not known to this version of Loupe`);
  }
}

/** How a run is shown with its labels: its name (else `fallback`) and its tags as `#tag`. */
export function labelledRun(labels: RunLabels | undefined, fallback: string): { label: string; tags: string } {
  return { label: labels?.name ?? fallback, tags: (labels?.tags ?? []).map((t) => `#${t}`).join(' ') };
}
