/**
 * One run's kernel shared by the agent and the analyst: executions are queued so an analyst cell never interleaves
 * with an agent cell. Analyst executions are recorded in the store as analyst cells (step index -1) and, while the
 * agent is still running, mark the run "assisted".
 */
import type { KernelExecuteResult, KernelLike } from '../../core/agent/types.ts';
import type { RunStore } from '../../core/store/run-store.ts';

export class SharedKernel implements KernelLike {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly inner: KernelLike;
  agentRunning = true;
  /** The run closed the kernel (its state is gone). */
  closed = false;

  constructor(inner: KernelLike) {
    this.inner = inner;
  }

  get info(): KernelLike['info'] {
    return this.inner.info;
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  execute(code: string, opts?: { timeoutMs?: number }): Promise<KernelExecuteResult> {
    return this.enqueue(() => this.inner.execute(code, opts));
  }

  /** Runs an analyst's cell and records it (step -1 = analyst) in the run's store. */
  async executeAsAnalyst(store: RunStore, runId: string, code: string): Promise<KernelExecuteResult> {
    const r = await this.execute(code);
    await store.insertCell({
      runId,
      stepIndex: -1,
      seq: await store.nextCellSeq(runId),
      code,
      status: r.status,
      stdout: r.stdout,
      stderr: r.stderr,
      result: r.result ?? null,
      error: r.error ?? null,
      tables: r.tables ?? [],
      figures: (r.figures ?? []).map((f) => f.png),
      durationMs: r.durationMs,
      replay: false,
    });
    if (this.agentRunning) {
      await store.addEvent(runId, 'assisted', 'an analyst ran code in the kernel while the agent was running');
    } else await store.addEvent(runId, 'analyst-cell', 'an analyst ran code in the kernel after the run');
    return r;
  }

  interrupt(): void {
    this.inner.interrupt();
  }

  restart(): Promise<void> {
    return this.enqueue(() => this.inner.restart());
  }

  close(): Promise<void> {
    this.closed = true;
    return this.inner.close();
  }
}
