import type { LoadSuiteOptions, Suite } from '../types.ts';
/** AnalystBench loader (in progress). @throws Error until implemented. */
export function loadAnalystBench(root: string, _opts: LoadSuiteOptions): Suite {
  throw new Error(`AnalystBench loader not implemented yet (${root})`);
}
