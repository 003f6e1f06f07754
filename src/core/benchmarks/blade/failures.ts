/**
 * BLADE failure analysis: Loupe's own taxonomy over BLADE's decision types; the dataset as the scenario. BLADE
 * scores a run as a whole (precision, coverage@k), so there are no per-item failures to sample: experts tag
 * decisions in the trajectory or the submitted analysis directly. Source: issue 19; spec §7.3.
 */
import type { BenchmarkFailureAnalysis } from '../types.ts';
import { BLADE_TAXONOMY } from './taxonomy.ts';

export const BLADE_FAILURE_ANALYSIS: BenchmarkFailureAnalysis = {
  taxonomy: BLADE_TAXONOMY,
  scenario: (s) => String((s.detail as { dataset?: string } | null)?.dataset ?? s.blockId),
  failedItems: () => [],
  insights: null,
};
