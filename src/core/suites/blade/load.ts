import type { LoadSuiteOptions, Suite } from '../types.ts';
/** BLADE loader (in progress). @throws Error until implemented. */
export function loadBlade(root: string, _opts: LoadSuiteOptions, _kind: 'blade' | 'blade-mcq'): Suite {
  throw new Error(`BLADE loader not implemented yet (${root})`);
}
