/**
 * A second run-store engine, in memory, for tests only (issue 12: "a second engine must be addable without touching
 * callers"). It implements the `RunStore` interface from its records alone — no SQL, no SQLite handle — so a test that
 * runs, scores and shows runs on it proves the runner, the scorer and the Results view use nothing but the interface.
 */
import type {
  AnswerRecord,
  InterventionRecord,
  JudgementRecord,
  JudgementUse,
  KernelCellRecord,
  RunEventRecord,
  RunRecord,
  StepRecord,
  StoredScore,
} from '../../src/core/store/records.ts';
import type {
  ArtefactRows,
  CellQuery,
  JudgementRows,
  NewIntervention,
  NewRun,
  RunFilter,
  RunLeaseHolder,
  RunLeaseResult,
  RunArtefact,
  RunPatch,
  RunStore,
  ScoreRows,
  StepEffects,
  StepSummaryRecord,
  StepSubscription,
} from '../../src/core/store/types.ts';

import { createHash } from 'node:crypto';

const clone = <T>(x: T): T => structuredClone(x);

export class MemoryRunStore implements RunStore {
  readonly engine = 'memory';
  readonly location = 'memory:';
  #runs = new Map<string, RunRecord & { lease?: RunLeaseHolder; extra: Record<string, unknown> }>();
  #steps = new Map<string, StepRecord[]>();
  #answers = new Map<string, AnswerRecord[]>();
  #notes = new Map<string, string[]>();
  #code = new Map<string, string>();
  #cells = new Map<string, KernelCellRecord[]>();
  #events = new Map<string, RunEventRecord[]>();
  #interventions = new Map<string, InterventionRecord[]>();
  #seq = 0;
  #stepSeq: Array<{ seq: number; step: StepRecord }> = [];
  #judgements = new Map<string, JudgementRecord & { use: JudgementUse }>();
  #scores: StoredScore[] = [];

  #run(id: string) {
    const r = this.#runs.get(id);
    if (!r) throw new Error(`no run '${id}' in memory`);
    return r;
  }

  async schemaVersion(): Promise<number> {
    return 1;
  }
  async createRun(r: NewRun): Promise<RunRecord> {
    if (this.#runs.has(r.id)) throw new Error(`run ${r.id} exists`);
    const { tokensKnown: _tk, workspace, ...fields } = r;
    this.#runs.set(r.id, {
      ...clone(fields),
      storedWorkspace: workspace,
      status: r.status ?? 'pending',
      statusReason: null,
      createdAt: new Date(Date.now() + this.#runs.size).toISOString(),
      startedAt: null,
      endedAt: null,
      durationMs: 0,
      steps: 0,
      tokens: r.tokensKnown === false ? null : { input: 0, output: 0, cached: 0 },
      costUsd: null,
      extra: {},
    });
    return (await this.getRun(r.id))!;
  }
  async updateRun(id: string, p: RunPatch): Promise<void> {
    const r = this.#run(id);
    if (p.status !== undefined) r.status = p.status;
    if (p.statusReason !== undefined) r.statusReason = p.statusReason;
    if (p.startedAt !== undefined) r.startedAt ??= p.startedAt;
    if (p.endedAt !== undefined) r.endedAt = p.endedAt;
    if (p.addDurationMs !== undefined) r.durationMs += Math.round(p.addDurationMs);
    if (p.sandbox !== undefined) r.sandbox = p.sandbox;
    if (p.ownerPid !== undefined) r.ownerPid = p.ownerPid;
    if (p.workspace !== undefined) r.storedWorkspace = p.workspace;
  }
  async setDataChecksums(id: string, c: Record<string, string>): Promise<void> {
    this.#run(id).dataChecksums = { ...c };
  }
  async acquireRunLease(
    runId: string,
    o: { owner: string; host: string; pid: number },
    ttlMs: number,
  ): Promise<RunLeaseResult> {
    const r = this.#run(runId);
    const now = Date.now();
    const held = r.lease;
    if (held && held.owner !== o.owner && Date.parse(held.expiresAt) >= now) return { ok: false, holder: held };
    r.lease = {
      owner: o.owner,
      host: o.host,
      pid: o.pid,
      heartbeatAt: new Date(now).toISOString(),
      expiresAt: new Date(now + ttlMs).toISOString(),
    };
    return held && held.owner !== o.owner ? { ok: true, tookOverFrom: held } : { ok: true };
  }
  async renewRunLease(runId: string, owner: string, ttlMs: number): Promise<boolean> {
    const r = this.#run(runId);
    if (r.lease?.owner !== owner) return false;
    r.lease.expiresAt = new Date(Date.now() + ttlMs).toISOString();
    return true;
  }
  async releaseRunLease(runId: string, owner: string): Promise<void> {
    const r = this.#run(runId);
    if (r.lease?.owner === owner) delete r.lease;
  }
  async getRunLease(runId: string): Promise<RunLeaseHolder | undefined> {
    return this.#run(runId).lease;
  }
  async commitStep(step: StepRecord, effects: StepEffects = {}): Promise<void> {
    const list = this.#steps.get(step.runId) ?? [];
    if (list.some((s) => s.index === step.index)) throw new Error('UNIQUE constraint failed: steps.run_id, steps.idx');
    list.push(clone(step));
    this.#steps.set(step.runId, list);
    this.#stepSeq.push({ seq: ++this.#seq, step: clone(step) });
    const r = this.#run(step.runId);
    r.steps++;
    if (r.tokens && step.usage) {
      r.tokens = {
        input: r.tokens.input + step.usage.input,
        output: r.tokens.output + step.usage.output,
        cached: r.tokens.cached + step.usage.cached,
      };
    }
    if (step.costUsd !== null) r.costUsd = (r.costUsd ?? 0) + step.costUsd;
    await this.applyEffects(step.runId, step.index, effects);
  }
  async applyEffects(runId: string, stepIndex: number, e: StepEffects): Promise<void> {
    const answers = this.#answers.get(runId) ?? [];
    for (const a of e.answers ?? []) {
      const k = answers.findIndex((x) => x.queryId === a.queryId);
      const rec = { ...clone(a), runId, stepIndex };
      if (k >= 0) answers[k] = rec;
      else answers.push(rec);
    }
    this.#answers.set(runId, answers);
    if (e.notes) this.#notes.set(runId, [...e.notes]);
    if (e.savedCode !== undefined) this.#code.set(runId, e.savedCode);
    for (const c of e.cells ?? []) await this.insertCell(c);
    if (e.extra) this.#run(runId).extra = clone(e.extra);
  }
  async insertCell(c: KernelCellRecord): Promise<void> {
    this.#cells.set(c.runId, [...(this.#cells.get(c.runId) ?? []), clone(c)]);
  }
  async addEvent(runId: string, kind: string, message: string): Promise<void> {
    this.#events.set(runId, [
      ...(this.#events.get(runId) ?? []),
      { runId, at: new Date().toISOString(), kind, message },
    ]);
  }
  async addIntervention(i: NewIntervention, leaseOwner: string): Promise<InterventionRecord | undefined> {
    const r = this.#run(i.runId);
    if (r.lease?.owner !== leaseOwner) return undefined;
    const list = this.#interventions.get(i.runId) ?? [];
    const rec: InterventionRecord = {
      runId: i.runId,
      seq: list.length + 1,
      beforeStep: i.beforeStep ?? r.steps,
      at: i.at ?? new Date().toISOString(),
      who: i.who,
      kind: i.kind,
      text: i.text,
    };
    this.#interventions.set(i.runId, [...list, rec]);
    return clone(rec);
  }
  async getInterventions(runId: string): Promise<InterventionRecord[]> {
    return clone(this.#interventions.get(runId) ?? []);
  }
  async getInterventionsOf(ids: string[]): Promise<Map<string, InterventionRecord[]>> {
    return new Map(ids.map((id) => [id, clone(this.#interventions.get(id) ?? [])]));
  }
  async listRuns(f: RunFilter = {}): Promise<RunRecord[]> {
    const all = [...this.#runs.values()].filter(
      (r) =>
        (!f.suite || r.suite === f.suite) &&
        (!f.blockId || r.blockId === f.blockId) &&
        (!f.status || r.status === f.status) &&
        (!f.sweepId || r.sweepId === f.sweepId),
    );
    return all
      .reverse()
      .slice(0, f.limit ?? Infinity)
      .map((r) => this.#public(r));
  }
  #public(r: RunRecord & { lease?: RunLeaseHolder; extra: Record<string, unknown> }): RunRecord {
    const { lease: _l, extra: _e, ...rest } = r;
    return clone(rest);
  }
  async getRun(id: string): Promise<RunRecord | undefined> {
    const r = this.#runs.get(id);
    return r ? this.#public(r) : undefined;
  }
  async getStepSummaries(runId: string): Promise<StepSummaryRecord[]> {
    const seqOf = new Map(this.#stepSeq.filter((x) => x.step.runId === runId).map((x) => [x.step.index, x.seq]));
    return (await this.getSteps(runId)).map((s) => ({
      seq: seqOf.get(s.index) ?? 0,
      runId,
      index: s.index,
      startedAt: s.startedAt,
      latencyMs: s.latencyMs,
      toolMs: s.toolMs,
      usage: s.usage ? { input: s.usage.input, output: s.usage.output } : null,
      content: (s.assistant.content ?? '').slice(0, 400),
      toolNames: s.toolCalls.map((c) => c.name),
      anyError: s.toolCalls.some((c) => c.isError),
      firstArguments: s.toolCalls[0]?.argumentsText ?? null,
    }));
  }
  async searchSteps(runId: string, query: string): Promise<number[]> {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    return (await this.getSteps(runId))
      .filter((s) => words.every((w) => JSON.stringify([s.assistant, s.toolCalls]).toLowerCase().includes(w)))
      .map((s) => s.index);
  }
  async getSteps(runId: string, from = 0): Promise<StepRecord[]> {
    return clone((this.#steps.get(runId) ?? []).filter((s) => s.index >= from).sort((a, b) => a.index - b.index));
  }
  async getStep(runId: string, index: number): Promise<StepRecord | undefined> {
    return clone((this.#steps.get(runId) ?? []).find((s) => s.index === index));
  }
  async getAnswers(runId: string): Promise<AnswerRecord[]> {
    return clone(this.#answers.get(runId) ?? []);
  }
  async getAnswersOf(ids: string[]): Promise<Map<string, AnswerRecord[]>> {
    return new Map(await Promise.all(ids.map(async (id) => [id, await this.getAnswers(id)] as const)));
  }
  async getToolErrorCountsOf(ids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of ids) {
      const n = (await this.getSteps(id)).reduce((a, s) => a + s.toolCalls.filter((c) => c.isError).length, 0);
      if (n) out.set(id, n);
    }
    return out;
  }
  async getNotes(runId: string): Promise<string[]> {
    return [...(this.#notes.get(runId) ?? [])];
  }
  async getSavedCode(runId: string): Promise<string | null> {
    return this.#code.get(runId) ?? null;
  }
  async getExtraState(runId: string): Promise<Record<string, unknown>> {
    return clone(this.#runs.get(runId)?.extra ?? {});
  }
  async getCells(runId: string, o: CellQuery = {}): Promise<KernelCellRecord[]> {
    return clone(
      (this.#cells.get(runId) ?? []).filter(
        (c) => c.seq > (o.sinceSeq ?? -1) && (o.includeReplays !== false || !c.replay),
      ),
    ).map((c) => ({ ...c, figureCount: c.figures.length, figures: o.withFigures === false ? [] : c.figures }));
  }
  async nextCellSeq(runId: string): Promise<number> {
    return (this.#cells.get(runId) ?? []).reduce((m, c) => Math.max(m, c.seq + 1), 0);
  }
  async getEvents(runId: string): Promise<RunEventRecord[]> {
    return clone(this.#events.get(runId) ?? []);
  }
  async getEventsOf(ids: string[], kind?: string): Promise<Map<string, RunEventRecord[]>> {
    return new Map(
      await Promise.all(
        ids.map(
          async (id) => [id, (await this.getEvents(id)).filter((e) => kind === undefined || e.kind === kind)] as const,
        ),
      ),
    );
  }
  subscribeSteps(
    onStep: (s: StepRecord) => void,
    o: { runId?: string; intervalMs?: number; fromStart?: boolean; afterSeq?: number } = {},
  ): StepSubscription {
    let last = o.afterSeq ?? (o.fromStart ? 0 : this.#seq);
    let stopped = false;
    const tick = () => {
      if (stopped) return;
      for (const x of this.#stepSeq.filter((y) => y.seq > last && (!o.runId || y.step.runId === o.runId))) {
        last = x.seq;
        onStep(clone(x.step));
      }
    };
    const t = setInterval(tick, o.intervalMs ?? 250);
    t.unref?.();
    return Object.assign(
      () => {
        stopped = true;
        clearInterval(t);
      },
      { poll: tick },
    );
  }
  async deleteRun(id: string): Promise<boolean> {
    this.#scores = this.#scores.filter((s) => s.runId !== id);
    this.#interventions.delete(id);
    this.#artefacts.delete(id);
    return this.#runs.delete(id);
  }
  readonly judgements: JudgementRows = {
    get: async (key) => clone(this.#judgements.get(key)),
    put: async (j, use = {}) => {
      const prev = this.#judgements.get(j.key);
      this.#judgements.set(j.key, {
        ...clone(j),
        use: { runId: prev?.use.runId ?? use.runId, itemRef: prev?.use.itemRef ?? use.itemRef } as JudgementUse,
      });
    },
    listPending: async (task) =>
      [...this.#judgements.values()].filter((j) => j.status === 'pending' && (!task || j.task === task)).map(clone),
    listForRun: async (runId) => [...this.#judgements.values()].filter((j) => j.use.runId === runId).map(clone),
  };
  #artefacts = new Map<string, Map<string, { artefact: RunArtefact; bytes: Buffer }>>();
  readonly artefacts: ArtefactRows = {
    put: async (runId, files) => {
      this.#run(runId);
      const m = this.#artefacts.get(runId) ?? new Map();
      for (const f of files) {
        const bytes = Buffer.from(f.bytes);
        m.set(f.path, {
          artefact: {
            runId,
            path: f.path,
            sha256: createHash('sha256').update(bytes).digest('hex'),
            mediaType: f.mediaType,
            size: bytes.byteLength,
            capturedAt: new Date().toISOString(),
          },
          bytes,
        });
      }
      this.#artefacts.set(runId, m);
    },
    list: async (runId) =>
      [...(this.#artefacts.get(runId)?.values() ?? [])]
        .map((x) => clone(x.artefact))
        .sort((a, b) => a.path.localeCompare(b.path)),
    get: async (runId, path) => {
      const x = this.#artefacts.get(runId)?.get(path);
      return x ? { artefact: clone(x.artefact), bytes: Buffer.from(x.bytes) } : undefined;
    },
  };
  readonly scores: ScoreRows = {
    save: async (s) => {
      const key = (x: StoredScore) =>
        `${x.runId}\u0000${x.judgeId}\u0000${JSON.stringify(Object.entries(x.options).sort())}`;
      this.#scores = [clone(s), ...this.#scores.filter((x) => key(x) !== key(s))];
    },
    list: async (runId) => clone(this.#scores.filter((s) => !runId || s.runId === runId)),
  };
  async close(): Promise<void> {}
}
