/**
 * What a kernel enforces and how, for the run record (issue 37 "Kernel limits that hold for the kernel's whole life").
 * A light module (types and one formatter, no process code), so the agent loop can describe limits without loading the
 * kernel.
 */
/**
 * The limits in force for a kernel process and the mechanism behind each: what is aggregate (all the kernel's
 * processes together) and what is per process. Recorded with every run (event `kernel-limits`). Source: issue 37.
 */
export interface KernelLimits {
  /**
   * How nothing of the agent's runs between cells: `cgroup-freezer` (the kernel's cgroup is frozen from the end of a
   * cell to the start of the next: threads and processes a cell left get no CPU and cannot write); `sigstop` (no
   * freezer: every process of the kernel's tree is sent SIGSTOP, then SIGCONT).
   */
  betweenCells: 'cgroup-freezer' | 'sigstop';
  /** The kernel's cgroup (version and folders), or null when none could be made. */
  cgroup: { version: 1 | 2; dirs: string[] } | null;
  /** Memory budget (MiB, 0 = none); `aggregate`: true when the cgroup enforces it for the whole tree. */
  memory: { budgetMb: number; aggregate: boolean; mechanism: string; perProcessMb: number };
  /** Most processes at once (aggregate; 0 = none) and how. */
  processes: { max: number; mechanism: string };
  /** CPU: aggregate rate in cores (null = not limited) and the per-process CPU time per cell (RLIMIT_CPU). */
  cpu: { coresAggregate: number | null; mechanism: string };
  /** Workspace quota (MiB, 0 = none): measured by polling (no file-system quota is used). */
  workspaceQuota: { limitMb: number; mechanism: string };
}

/**
 * One sentence for the run record saying which limits hold and how (per process vs aggregate).
 * @param l the kernel's {@link KernelLimits}. @returns the sentence. Source: issue 37.
 */
export function describeKernelLimits(l: KernelLimits): string {
  const mem = l.memory.budgetMb
    ? l.memory.aggregate
      ? `memory ${l.memory.budgetMb} MiB for all processes together (${l.memory.mechanism}), ${l.memory.perProcessMb} MiB address space per process (RLIMIT_AS)`
      : `memory ${l.memory.perProcessMb} MiB address space per process (RLIMIT_AS${l.processes.max ? `, × at most ${l.processes.max} processes ≤ the ${l.memory.budgetMb} MiB budget` : '; no process limit, so no aggregate bound'}; no cgroup)`
    : 'no memory limit';
  const procs = l.processes.max
    ? `at most ${l.processes.max} processes (${l.processes.mechanism})`
    : 'no process limit';
  const cpu = `CPU ${l.cpu.coresAggregate ? `≤ ${l.cpu.coresAggregate} core(s) for all processes together` : 'rate not limited'} (${l.cpu.mechanism}), CPU time per process per cell (RLIMIT_CPU)`;
  const between =
    l.betweenCells === 'cgroup-freezer'
      ? 'frozen between cells (cgroup freezer: no thread or process of the agent runs)'
      : 'stopped between cells (SIGSTOP to every process of the kernel; no cgroup freezer)';
  const quota = l.workspaceQuota.limitMb
    ? `workspace quota ${l.workspaceQuota.limitMb} MiB (${l.workspaceQuota.mechanism})`
    : 'no workspace quota';
  return `kernel limits: ${between}; ${mem}; ${procs}; ${cpu}; ${quota}${l.cgroup ? `; cgroup v${l.cgroup.version}` : ''}.`;
}
