/**
 * BLADE's `EntireAnalysis` (what an agent submits: conceptual variables, transform code, model code), one
 * type for the agent's `submit_analysis` tool and the scorer. Source: spec §1.3.2, BLADE
 * `blade_bench/llms/datamodel/analysis.py`.
 */
export interface BladeAnalysis {
  cvars: {
    ivs: { description: string; columns: string[] }[];
    dv: { description: string; columns: string[] };
    controls: { description: string; is_moderator: boolean; moderator_on?: string; columns: string[] }[];
  };
  transform_code: string;
  m_code: string;
}
