/** Sandboxed Python kernel for agent code (issue 5 "Python kernel"). */
export { PythonKernel, driverPath, findBubblewrap, bubblewrapArgs } from './python-kernel.ts';
export type { KernelOptions, ExecuteResult, KernelInfo, SandboxMode } from './python-kernel.ts';
export { describeKernelLimits, type KernelLimits } from './limits.ts';
export { LONGTA_IMPORT_ALLOWLIST } from './allowlists.ts';
export { probeSandbox, SANDBOX_REFUSED_EXIT, SIMULATE_NO_USERNS_ENV, type SandboxProbe } from './sandbox-probe.ts';
