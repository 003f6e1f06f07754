/**
 * The BLADE decision workbench of one dataset (issue 18): what the authoring / review / agreement panel and the CLI
 * do, in plain Node — the ground truth at its newest version, the executed check of a spec form, saving it (or
 * accepting a reviewed decision) as a new version, the review queue of sampled run decisions with its current item
 * for an annotator, verdicts, agreement per decision type and the decisions offered for acceptance by consensus.
 * Source: issue 18; BLADE paper §3, App. A.2.
 */
import { readFileSync } from 'node:fs';
import {
  annotatorLabel,
  annotatorLabels,
  annotationStoreOf,
  currentAnnotations,
  type AnnotationQueue,
  type AnnotationStore,
} from '../../annotations/index.ts';
import type { RunRecord } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import type { Block } from '../../suites/types.ts';
import type { BladeAnnotations } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import type { SandboxMode } from '../../kernel/index.ts';
import {
  checkDecision,
  saveDecision,
  startDecisionExecutor,
  type CheckResult,
  type DecisionExecutor,
  type DecisionForm,
} from './authoring.ts';
import {
  BLADE_REVIEW_TASK,
  consensusOf,
  decisionAgreement,
  decisionVerdict,
  DEFAULT_CONSENSUS,
  ensureExpertDecisionItems,
  ensureRunDecisionItems,
  prefillForm,
  REVIEW_FIELDS,
  reviewQueueSpec,
  type ConsensusRule,
  type DecisionAgreementRow,
  type DecisionInput,
  type DecisionType,
  type DecisionVerdict,
  type ReviewField,
} from './decision-review.ts';
import { bladeGtStoreOf, parseGtCsv, type BladeGtVersion } from './gt-versions.ts';

/** What the authoring form needs to offer: the ground truth's transforms (for branches), columns, the version. */
export interface AuthoringContext {
  dataset: string;
  researchQuestion: string;
  version: number;
  dataColumns: string[];
  /** Transforms of the ground truth: id, name, output columns (ROOT first). */
  transforms: Array<{ id: string; name: string; outputs: string[] }>;
  derivedColumns: string[];
}

/** One review item as an annotator sees it (no agent, no model, no other verdicts before submitting when blind). */
export interface DecisionReviewView {
  queueId: string;
  queueName: string;
  annotator: string;
  total: number;
  done: number;
  byAnnotator: Record<string, number>;
  /** How each annotator of `byAnnotator` and of `item.others` is shown: the name with the database role(s) that wrote their verdicts, e.g. `Ana (role ana_pg)` (team store; the bare name on SQLite). */
  labels: Record<string, string>;
  item: null | {
    id: string;
    pos: number;
    input: DecisionInput;
    fields: ReviewField[];
    /** This annotator's current verdict, if any. */
    mine: DecisionVerdict | null;
    /** Other annotators' verdicts: shown after this annotator submitted. */
    others: Array<{ annotator: string; verdict: DecisionVerdict }> | null;
  };
}

/** A decision offered for acceptance: its consensus is justifiable and it is not in the ground truth yet. */
export interface AcceptanceCandidate {
  itemId: string;
  dataset: string;
  type: DecisionType;
  summary: string;
  annotators: string[];
  /** Set once accepted: the version it went into. */
  acceptedIn: number | null;
}

/** The agreement figure's data and the decisions offered for acceptance. */
export interface DecisionAgreementView {
  rule: ConsensusRule;
  rows: DecisionAgreementRow[];
  candidates: AcceptanceCandidate[];
  /** How each annotator of the rows and candidates is shown (`Ana (role ana_pg)` on a team store, the bare name on SQLite). */
  labels: Record<string, string>;
}

/** A one-line summary of a decision. */
export function decisionSummary(d: DecisionInput['decision']): string {
  if (d.type === 'cvar') {
    return `${d.variableType}: ${d.description} [${d.columns.join(', ')}]${d.moderatorOn ? ` on ${d.moderatorOn}` : ''}`;
  }
  if (d.type === 'model') {
    return `${d.specification}: ${
      d.code
        .split('\n')
        .find((l) => /~|fit|\(/.test(l))
        ?.trim()
        .slice(0, 100) ?? ''
    }`;
  }
  return `${d.verb || 'transform'}: ${d.code.split('\n')[0]!.slice(0, 100)}`;
}

const ACCEPT_MARK = /review item (bd:[0-9a-f]{16})/g;

/** The workbench of one BLADE dataset; `close()` stops its kernels. */
export class BladeDecisionWorkbench {
  readonly store: RunStore;
  readonly block: Block;
  readonly dataset: string;
  readonly dataPath: string;
  readonly ann: AnnotationStore;
  readonly #opts: { sandbox?: SandboxMode; python?: string; timeoutMs?: number };
  #executor: Promise<DecisionExecutor> | undefined;

  /**
   * @param block a BLADE block with data.csv and annotations.csv.
   * @throws LoupeInputError when the block has no data.csv or ground truth.
   */
  constructor(
    store: RunStore,
    block: Block,
    opts: { sandbox?: SandboxMode; python?: string; timeoutMs?: number } = {},
  ) {
    this.store = store;
    this.block = block;
    this.dataset = block.blade?.dataset ?? block.id;
    const data = block.visible.data.find((f) => /(^|\/)data\.csv$/.test(f.path))?.path;
    if (!data) {
      throw new LoupeInputError(
        `BLADE dataset ${this.dataset}`,
        'has no data.csv: decisions cannot be checked against the data',
      );
    }
    if (!block.hidden.annotations) {
      throw new LoupeInputError(
        `BLADE dataset ${this.dataset}`,
        'has no annotations.csv: there is no ground truth to author',
      );
    }
    this.dataPath = data;
    this.ann = annotationStoreOf(store);
    this.#opts = opts;
  }

  #exec(): Promise<DecisionExecutor> {
    this.#executor ??= startDecisionExecutor({
      dataDir: this.dataPath.replace(/\/[^/]+$/, ''),
      ...(this.#opts.sandbox ? { sandbox: this.#opts.sandbox } : {}),
      ...(this.#opts.python ? { python: this.#opts.python } : {}),
      ...(this.#opts.timeoutMs ? { timeoutMs: this.#opts.timeoutMs } : {}),
    });
    this.#executor.catch(() => {
      this.#executor = undefined;
    });
    return this.#executor;
  }

  /** The shipped annotations.csv text. */
  shippedCsv(): string {
    return readFileSync(this.block.hidden.annotations!.file, 'utf8');
  }

  /** The newest ground truth (a stored version, else the shipped file = version 0). */
  async groundTruth(): Promise<{ version: number; csv: string; annotations: BladeAnnotations }> {
    const v = await bladeGtStoreOf(this.store).latest(this.dataset);
    const csv = v?.csv ?? this.shippedCsv();
    return {
      version: v?.version ?? 0,
      csv,
      annotations: v
        ? parseGtCsv(csv, `${this.dataset}/annotations.csv@v${v.version}`).annotations
        : this.block.hidden.annotations!,
    };
  }

  /** Columns of data.csv (its header line). */
  dataColumns(): string[] {
    const head = readFileSync(this.dataPath, 'utf8').split(/\r?\n/, 1)[0] ?? '';
    return head.split(',').map((c) => c.replace(/^"|"$/g, '').trim());
  }

  async context(): Promise<AuthoringContext> {
    const gt = await this.groundTruth();
    const transforms = gt.annotations.transforms.map((t) => ({
      id: t.specId,
      name: t.isRoot ? 'ROOT (the data)' : t.specName || t.specId.slice(0, 8),
      outputs: t.columnMappings.map((m) => m.output).filter(Boolean),
    }));
    transforms.sort((a, b) => (a.id === 'ROOT_SPEC_ID' ? -1 : b.id === 'ROOT_SPEC_ID' ? 1 : 0));
    return {
      dataset: this.dataset,
      researchQuestion: this.block.visible.researchQuestions?.[0] ?? '',
      version: gt.version,
      dataColumns: this.dataColumns(),
      transforms,
      derivedColumns: [...new Set(transforms.flatMap((t) => t.outputs))],
    };
  }

  /** Runs the checks of a form against the newest ground truth (never throws for bad code). */
  async check(form: DecisionForm): Promise<CheckResult> {
    const gt = await this.groundTruth();
    return checkDecision(form, { annotations: gt.annotations, dataPath: this.dataPath, executor: await this.#exec() });
  }

  /**
   * Saves a checked form as a new version on top of the newest one; with `acceptItemId` the note records the review
   * item it accepts (so it is no longer offered). @throws LoupeInputError as {@link saveDecision} (nothing saved).
   */
  async save(
    form: DecisionForm,
    check: CheckResult | undefined,
    author: string,
    note = '',
    acceptItemId?: string,
  ): Promise<{ version: BladeGtVersion; specId: string }> {
    const gt = await this.groundTruth();
    if (acceptItemId) {
      const item = await this.ann.getItem(acceptItemId);
      if (!item || item.task !== BLADE_REVIEW_TASK) {
        throw new LoupeInputError(`review item ${acceptItemId}`, 'does not exist; nothing saved');
      }
    }
    const label = form.kind === 'transform' ? form.specName : form.kind === 'cvar' ? form.concept : form.specification;
    const n = acceptItemId
      ? `accepted ${form.kind} ${label} by consensus from review item ${acceptItemId}${note.trim() ? ` · ${note.trim()}` : ''}`
      : note;
    return saveDecision({
      gts: bladeGtStoreOf(this.store),
      dataset: this.dataset,
      shippedCsv: this.shippedCsv(),
      parent: gt.version,
      form,
      check,
      author,
      note: n,
    });
  }

  /** BLADE runs of this dataset that finished. */
  async runs(): Promise<RunRecord[]> {
    return (await this.store.listRuns({ suite: this.block.suite })).filter(
      (r) => r.blockId === this.block.id && (r.status === 'finished' || r.status === 'budget_exhausted'),
    );
  }

  /**
   * Opens the review queue: items for every decision of the runs (transform code split in the sandboxed BLADE
   * driver), and with `includeExpert` of the newest ground truth, then the seeded sample of `perDataset` per source.
   * @throws LoupeInputError when no run has a decision to review.
   */
  async openReview(o: {
    runIds?: string[];
    perDataset: number;
    seed: number;
    reviewers: number;
    includeExpert?: boolean;
  }): Promise<AnnotationQueue> {
    const runs = o.runIds?.length
      ? (await Promise.all(o.runIds.map((id) => this.store.getRun(id)))).filter((r): r is RunRecord => !!r)
      : await this.runs();
    const { startBladePython } = await import('./eval/python.ts');
    const dir = this.dataPath.replace(/\/[^/]+$/, '');
    const py = await startBladePython({
      backend: 'kernel',
      sandbox: this.#opts.sandbox ?? 'bubblewrap',
      readOnlyPaths: [dir],
      cwd: dir,
      ...(this.#opts.python ? { python: this.#opts.python } : {}),
    });
    try {
      const cols = this.dataColumns();
      const rq = this.block.visible.researchQuestions?.[0] ?? '';
      const { items } = await ensureRunDecisionItems(
        this.ann,
        runs,
        this.store,
        async () => ({ dataset: this.dataset, dataPath: this.dataPath, researchQuestion: rq, dataColumns: cols }),
        (p, code) => py.split(p, code),
      );
      if (o.includeExpert) {
        const gt = await this.groundTruth();
        await ensureExpertDecisionItems(
          this.ann,
          { dataset: this.dataset, researchQuestion: rq, dataColumns: cols },
          gt.annotations,
          gt.version,
          this.block.suite,
        );
      }
      if (!items.length && !o.includeExpert) {
        throw new LoupeInputError(`BLADE dataset ${this.dataset}`, 'no finished run with a valid submission to review');
      }
    } finally {
      await py.close();
    }
    const spec = reviewQueueSpec({
      runIds: runs.map((r) => r.id),
      perDataset: o.perDataset,
      seed: o.seed,
      ...(o.includeExpert ? { includeExpert: true } : {}),
      datasets: [this.dataset],
    });
    return this.ann.openQueue(spec, {
      reviewers: o.reviewers,
      blind: true,
      name: `BLADE ${this.dataset}: ${o.perDataset} decisions per source (seed ${o.seed})`,
    });
  }

  /** The next item of a review queue for an annotator after `afterPos` (reserved), or the item at `pos`; annotators labelled with their database roles (`labels`). */
  async reviewView(
    queueId: string,
    annotator: string,
    at: { afterPos?: number; pos?: number } = {},
  ): Promise<DecisionReviewView> {
    const q = await this.ann.getQueue(queueId);
    if (!q) throw new LoupeInputError(`review queue ${queueId}`, 'no such queue');
    const e =
      at.pos !== undefined
        ? await this.ann.itemAt(queueId, at.pos)
        : await this.ann.nextItem(queueId, annotator, { afterPos: at.afterPos ?? -1 });
    const p = await this.ann.progress(queueId);
    const labels = Object.fromEntries(Object.keys(p.byAnnotator).map((w) => [w, annotatorLabel(w, p.roles[w])]));
    const base = {
      queueId,
      queueName: q.name,
      annotator,
      total: p.total,
      done: p.done,
      byAnnotator: p.byAnnotator,
      labels,
    };
    if (!e) return { ...base, item: null };
    const input = e.item.input as DecisionInput;
    const anns = await this.ann.annotations(e.item.id);
    const { byAnnotator } = currentAnnotations(anns);
    const mine = byAnnotator.get(annotator);
    return {
      ...base,
      labels: { ...annotatorLabels(anns), ...labels },
      item: {
        id: e.item.id,
        pos: e.pos,
        input,
        fields: [...REVIEW_FIELDS[input.decision.type]],
        mine: mine ? (mine.verdict as DecisionVerdict) : null,
        others:
          mine || !q.blind
            ? [...byAnnotator]
                .filter(([w]) => w !== annotator)
                .map(([w, a]) => ({ annotator: w, verdict: a.verdict as DecisionVerdict }))
            : null,
      },
    };
  }

  /** Records an annotator's verdict (superseding their previous one) and returns the item's view. */
  async submit(
    queueId: string,
    annotator: string,
    itemId: string,
    labels: Record<string, string>,
    explanation: string,
  ): Promise<DecisionReviewView> {
    const item = await this.ann.getItem(itemId);
    if (!item || item.task !== BLADE_REVIEW_TASK) {
      throw new LoupeInputError(`review item ${itemId}`, 'is not in the store');
    }
    const verdict = decisionVerdict((item.input as DecisionInput).decision.type, labels, explanation);
    const prev = currentAnnotations(await this.ann.annotations(itemId)).byAnnotator.get(annotator);
    await this.ann.annotate({
      itemId,
      annotator,
      verdict,
      note: explanation,
      origin: 'panel',
      queueId,
      ...(prev ? { supersedes: prev.id } : {}),
    });
    const pos = (await this.queuePos(queueId, itemId)) ?? 0;
    return this.reviewView(queueId, annotator, { pos });
  }

  async queuePos(queueId: string, itemId: string): Promise<number | undefined> {
    const total = (await this.ann.progress(queueId)).total;
    for (let p = 0; p < total; p++) if ((await this.ann.itemAt(queueId, p))?.item.id === itemId) return p;
    return undefined;
  }

  /** Agreement per decision type and source of this dataset, and the decisions offered for acceptance; annotators labelled with their database roles (`labels`). */
  async agreement(rule: ConsensusRule = DEFAULT_CONSENSUS): Promise<DecisionAgreementView> {
    const items = (await this.ann.listItems({ task: BLADE_REVIEW_TASK })).filter(
      (i) => (i.input as DecisionInput).dataset === this.dataset,
    );
    const rows = await decisionAgreement(this.ann, { itemIds: items.map((i) => i.id), rule });
    const anns = await this.ann.annotationsByItem({ task: BLADE_REVIEW_TASK });
    const accepted = new Map<string, number>();
    for (const v of await bladeGtStoreOf(this.store).versions(this.dataset)) {
      for (const m of v.note.matchAll(ACCEPT_MARK)) accepted.set(m[1]!, v.version);
    }
    const candidates: AcceptanceCandidate[] = [];
    for (const i of items) {
      const inp = i.input as DecisionInput;
      if (inp.source !== 'agent') continue;
      const c = consensusOf(anns.get(i.id) ?? [], rule);
      if (c.status !== 'justifiable') continue;
      candidates.push({
        itemId: i.id,
        dataset: inp.dataset,
        type: inp.decision.type,
        summary: decisionSummary(inp.decision),
        annotators: c.annotators,
        acceptedIn: accepted.get(i.id) ?? null,
      });
    }
    const shown = new Set([...rows.flatMap((r) => r.annotators), ...candidates.flatMap((c) => c.annotators)]);
    return {
      rule,
      rows,
      candidates,
      labels: annotatorLabels(
        items.flatMap((i) => anns.get(i.id) ?? []),
        shown,
      ),
    };
  }

  /** The spec form prefilled from a reviewed decision, against the newest ground truth. */
  async prefill(itemId: string): Promise<DecisionForm> {
    const item = await this.ann.getItem(itemId);
    if (!item || item.task !== BLADE_REVIEW_TASK) {
      throw new LoupeInputError(`review item ${itemId}`, 'is not in the store');
    }
    return prefillForm(item.input as DecisionInput, (await this.groundTruth()).annotations);
  }

  async close(): Promise<void> {
    const e = this.#executor;
    this.#executor = undefined;
    if (e) await (await e.catch(() => undefined))?.close();
  }
}
