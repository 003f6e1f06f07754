/**
 * The BLADE `reference` agent: a deterministic model that submits a complete ground-truth analysis
 * path through `submit_analysis` — the transforms along one branch of the ground-truth transform DAG
 * (ancestors first), one annotated model, and the conceptual variables tied to that model's columns —
 * so validation (and later scoring) run on the real annotations. When the validation rejects a
 * candidate (some annotated code does not run as written), the next model's path is submitted.
 * Source: issue 6 "Reference and replay agents"; spec §1.2.3 (annotations: branches, model ↔ cvar
 * association via associated columns).
 */
import type { Block } from '../../suites/types.ts';
import type { BladeAnnotations, BladeModelSpec, BladeTransformSpec } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { LlmError, type CompleteOptions, type LlmResponse, type LlmToolSpec } from '../../agent/llm.ts';
import type { ModelClient } from '../../agent/loop.ts';
import type { ChatMessage } from '../../agent/types.ts';
import type { BladeSubmissionInput, SubmittedVariable } from './toolset.ts';
import { referencePath } from './eval/reference-path.ts';
import type { BladeAnalysis } from './eval/score.ts';

/** One ground-truth path, ready for `submit_analysis`. */
export interface BladeReferencePath extends BladeSubmissionInput {
  /** The model spec it was built from. */
  modelSpecId: string;
  /** Transform spec ids in execution order (ROOT excluded). */
  transformSpecIds: string[];
  /** Who built it: `eval/blade/reference-path (<scope>)` or `agent/blade-reference`. */
  source: string;
}

/**
 * Some annotated model code calls the frame `data` or `soccer_data` (and passes `data=data`): alias
 * them to `df` at the top of `def model(df...)` when the body mentions them (a later assignment in
 * the body still wins).
 */
export function aliasModelFrames(mCode: string): string {
  const lines = mCode.split('\n');
  const i = lines.findIndex((l) => /^def model\(/.test(l));
  if (i < 0) return mCode;
  const body = lines.slice(i + 1).join('\n');
  const add = ['data', 'soccer_data'].filter((n) => new RegExp(`\\b${n}\\b`).test(body)).map((n) => `    ${n} = df`);
  return add.length ? [...lines.slice(0, i + 1), ...add, ...lines.slice(i + 1)].join('\n') : mCode;
}

/** Converts a BLADE `EntireAnalysis` into `submit_analysis` arguments (model frame aliases added). */
export function submissionFromAnalysis(a: BladeAnalysis): BladeSubmissionInput {
  return {
    conceptual_variables: [
      ...a.cvars.ivs.map((v) => ({ description: v.description, type: 'IV' as const, columns: v.columns })),
      { description: a.cvars.dv.description, type: 'DV' as const, columns: a.cvars.dv.columns },
      ...a.cvars.controls.map((v) => ({
        description: v.description,
        type: v.is_moderator ? ('Moderator' as const) : ('Control' as const),
        columns: v.columns,
        ...(v.is_moderator && v.moderator_on ? { moderator_on: v.moderator_on } : {}),
      })),
    ],
    transform_code: a.transform_code,
    model_code: aliasModelFrames(a.m_code),
  };
}

function indent(code: string): string {
  return code
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((l) => (l.trim() ? `    ${l}` : ''))
    .join('\n');
}

/**
 * Orders the transforms a model needs: its derived / leaf / specified spec ids plus every ancestor,
 * following for each spec the first branch whose dependencies all exist (ancestors first).
 * @returns spec ids in execution order, or null when a dependency is missing.
 */
function transformChain(model: BladeModelSpec, byId: Map<string, BladeTransformSpec>): string[] | null {
  const order: string[] = [];
  const seen = new Set<string>();
  const visiting = new Set<string>();
  const visit = (id: string): boolean => {
    if (id === 'ROOT_SPEC_ID' || seen.has(id)) return true;
    const s = byId.get(id);
    if (!s) return false;
    if (s.isRoot) return true;
    if (visiting.has(id)) return false;
    visiting.add(id);
    const branch = s.branches.find((b) => b.dependencies.every((d) => d === 'ROOT_SPEC_ID' || byId.has(d))) ?? {
      dependencies: [],
    };
    for (const d of branch.dependencies) if (!visit(d)) return false;
    visiting.delete(id);
    seen.add(id);
    order.push(id);
    return true;
  };
  const wanted = [...new Set([...model.leafSpecIds, ...model.derivedSpecIds, ...model.specifiedSpecIds])];
  for (const id of wanted) if (!visit(id)) return null;
  return order;
}

function modelCode(code: string): string {
  const assigned = [...code.matchAll(/^([A-Za-z_]\w*)\s*=(?!=)/gm)].map((m) => m[1]!);
  const ret = assigned.length ? assigned[assigned.length - 1]! : 'None';
  return `def model(df):\n    data = df\n    soccer_data = df\n${indent(code)}\n    return ${ret}\n`;
}

/**
 * Candidate ground-truth paths of a BLADE block, one per annotated model (annotation order), each
 * with at least one IV and exactly one DV among the model's associated conceptual variables.
 * @throws LoupeInputError(block) when the block has no annotations.
 */
export function bladeReferencePaths(block: Block): BladeReferencePath[] {
  const a: BladeAnnotations | undefined = block.hidden.annotations;
  if (!a) {
    throw new LoupeInputError(
      block.id,
      'BLADE block has no annotations.csv: the reference agent needs the ground truth',
    );
  }
  const byId = new Map(a.transforms.map((t) => [t.specId, t]));
  const out: BladeReferencePath[] = [];
  for (const m of a.models) {
    const chain = transformChain(m, byId);
    if (!chain) continue;
    const modelCols = new Set([...m.columnsOrig, ...m.columnsDerived]);
    const vars: SubmittedVariable[] = [];
    for (const c of a.conceptualVars) {
      const cols = [...new Set([...c.columnsOrig, ...c.columnsDerived])].filter((x) => modelCols.has(x));
      if (!cols.length) continue;
      vars.push({
        description: c.concept,
        type: c.effectiveType,
        columns: cols,
        ...(c.effectiveType === 'Moderator' && c.on ? { moderator_on: c.on } : {}),
      });
    }
    const dvs = vars.filter((v) => v.type === 'DV');
    if (!dvs.length || !vars.some((v) => v.type === 'IV')) continue;
    const conceptual = vars.filter((v) => v.type !== 'DV' || v === dvs[0]);
    const body = chain.map((id) => `    # ${byId.get(id)!.specName || id}\n${indent(byId.get(id)!.code)}`).join('\n');
    out.push({
      modelSpecId: m.specId,
      transformSpecIds: chain,
      source: 'agent/blade-reference',
      conceptual_variables: conceptual,
      transform_code: `def transform(df):\n${body ? body + '\n' : ''}    return df\n`,
      model_code: modelCode(m.code),
    });
  }
  return out;
}

/**
 * Every candidate path in the order the reference agent tries them: first the evaluation layer's
 * reference path (`eval/blade/reference-path.ts`: model scope, then single-path scope, then each
 * annotated model), then this module's per-model paths; duplicates removed.
 */
export function bladeReferenceCandidates(block: Block): BladeReferencePath[] {
  const a = block.hidden.annotations;
  if (!a) {
    throw new LoupeInputError(
      block.id,
      'BLADE block has no annotations.csv: the reference agent needs the ground truth',
    );
  }
  const out: BladeReferencePath[] = [];
  const tryEval = (opts: Parameters<typeof referencePath>[1], label: string) => {
    try {
      const r = referencePath(a, opts);
      if (r.analysis.cvars.ivs.length && r.analysis.cvars.dv.columns.length) {
        out.push({
          ...submissionFromAnalysis(r.analysis),
          modelSpecId: r.modelSpecId,
          transformSpecIds: r.specIds,
          source: `eval/blade/reference-path (${label})`,
        });
      }
    } catch {
      /* this variant cannot be built; try the next */
    }
  };
  tryEval({}, 'model scope');
  tryEval({ scope: 'single-path' }, 'single-path scope');
  a.models.forEach((_, i) => tryEval({ model: i }, `model ${i}`));
  out.push(...bladeReferencePaths(block));
  const seen = new Set<string>();
  return out.filter((p) => {
    const k = JSON.stringify([p.conceptual_variables, p.transform_code, p.model_code]);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

const zero = { input: 0, output: 0, cached: 0 };

/**
 * {@link ModelClient} that submits ground-truth paths until one validates (the loop then finishes on
 * the accepted submission). Throws a `protocol` LlmError (the run fails, naming each rejection) when
 * none validates.
 */
export class BladeReferenceModel implements ModelClient {
  readonly model = 'reference';
  readonly paths: BladeReferencePath[];

  constructor(block: Block) {
    this.paths = bladeReferenceCandidates(block);
    if (!this.paths.length) {
      throw new LoupeInputError(
        block.id,
        'no annotated model has an IV and a DV among its associated conceptual variables',
      );
    }
  }

  async complete(messages: ChatMessage[], _tools: LlmToolSpec[], _opts?: CompleteOptions): Promise<LlmResponse> {
    const t0 = performance.now();
    const turn = messages.filter((m) => m.role === 'assistant').length;
    const p = this.paths[turn];
    if (!p) {
      const errs = messages
        .filter((m) => m.role === 'tool')
        .map((m, i) => `path ${i}: ${String(m.content).split('\n').slice(0, 4).join(' ')}`);
      throw new LlmError(
        'protocol',
        `no ground-truth path validated (${this.paths.length} tried):\n${errs.join('\n')}`,
      );
    }
    const args = {
      conceptual_variables: p.conceptual_variables,
      transform_code: p.transform_code,
      model_code: p.model_code,
    };
    return {
      message: {
        role: 'assistant',
        content: `Submitting the ground-truth path of model spec ${p.modelSpecId} (${p.transformSpecIds.length} transforms; built by ${p.source}).`,
        tool_calls: [
          {
            id: `ref_${turn}`,
            type: 'function',
            function: { name: 'submit_analysis', arguments: JSON.stringify(args) },
          },
        ],
      },
      usage: zero,
      costUsd: null,
      finishReason: 'tool_calls',
      latencyMs: performance.now() - t0,
      attempts: 1,
    };
  }
}
