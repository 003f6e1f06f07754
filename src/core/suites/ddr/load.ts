import type { LoadSuiteOptions, Suite } from '../types.ts';
/** DDR loader (in progress). @throws Error until implemented. */
export async function loadDdr(root: string, _opts: LoadSuiteOptions): Promise<Suite> {
  throw new Error(`DDR loader not implemented yet (${root})`);
}
