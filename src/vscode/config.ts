/**
 * The one place that reads `loupe.*` settings. Defaults live only in package.json
 * (`contributes.configuration`); the `?? ` fallbacks below exist for the type checker and mirror them.
 * Core code never calls this: hosts pass a plain snapshot ({@link LoupeSettings}).
 */
import * as vscode from 'vscode';
import { annotatorId } from '../core/util/annotator.ts';
import { parseOtelEndpoint, parseOtelHeaders, type OtelExportConfig } from '../core/runs/otel.ts';

export interface SuiteSetting {
  /**
   * A registered benchmark kind (src/core/benchmarks/registry.ts); unknown kinds show as a suite that failed to load.
   * Absent in the setting for a folder holding a benchmark manifest (issue 44): `SuiteRegistry.settings()` fills in its kind.
   */
  suite: string;
  root: string;
  entities?: string;
}

export interface ModelProfile {
  name: string;
  baseUrl: string;
  model: string;
  temperature?: number;
  maxTokens?: number;
  reasoningEffort?: string;
  stream?: boolean;
  pricePerMillionInput?: number;
  pricePerMillionOutput?: number;
}

export interface LoupeSettings {
  suites: SuiteSetting[];
  runsDirectory: string;
  /** `loupe.store`: empty (the SQLite file in the runs folder) or a team store URL `postgres://user@host:port/db`. */
  store: string;
  pythonPath: string;
  sandbox: 'bubblewrap' | 'off';
  models: ModelProfile[];
  maxSteps: number;
  /** How runs are scored from VS Code (re-scoring against a checklist version): judge kind and, for LLM judges, a model profile. */
  judge: { kind: string; profile: string };
  /** `loupe.variables.profile`: the model profile that breaks questions into concepts in the Variables panel (empty: the first profile). */
  variablesProfile: string;
}

/**
 * A core message in the words of VS Code settings: core errors name the CLI's loader flags (`--entities`,
 * `--suite ddr`, `--root`), which mean nothing in the editor. Maps them to the fields of a `loupe.suites` entry.
 */
export function inSettingsTerms(message: string): string {
  return (
    message
      .replace(
        /^--(entities|root|database|metadata|publications|suite)\b:?/,
        (_m, f: string) => `the "${f}" field of the suite in the setting loupe.suites:`,
      )
      .replace(
        /with --entities TABLE\.COLUMN/g,
        'with "entities": "TABLE.COLUMN" in the suite\'s entry of the setting loupe.suites',
      )
      .replace(
        /\(give it with --entities TABLE\.COLUMN\)/g,
        '(give it as "entities": "TABLE.COLUMN" in the suite\'s entry of loupe.suites)',
      )
      .replace(/\(use --suite (\S+)\)/g, '(use "suite": "$1" in loupe.suites)')
      // run options (issue 22): the agent and model are chosen in the Run Benchmark Block picker and loupe.models
      .replace(/^--agent\b:?\s*/, 'Agent: ')
      .replace(/^--model\b:?\s*/, 'Model: ')
      .replace(/\(--model, --base-url\)/g, '(a model profile in the setting loupe.models)')
  );
}

/** The SecretStorage key of a model profile's API key (Set API Key stores it there). */
export const apiKeySecretName = (profile: string): string => `loupe.apiKey.${profile}`;
/** SecretStorage key of a team store's password (per store URL, which holds no password). */
export const storePasswordSecretName = (url: string): string => `loupe.storePassword.${url}`;

/** Reads a snapshot of all Loupe settings. */
export function readSettings(): LoupeSettings {
  const c = vscode.workspace.getConfiguration('loupe');
  return {
    suites: c.get<SuiteSetting[]>('suites') ?? [],
    runsDirectory: c.get<string>('runsDirectory') ?? '',
    store: (c.get<string>('store') ?? '').trim(),
    pythonPath: c.get<string>('python.path') ?? '',
    sandbox: c.get<'bubblewrap' | 'off'>('sandbox') ?? 'bubblewrap',
    models: c.get<ModelProfile[]>('models') ?? [],
    maxSteps: c.get<number>('maxSteps') ?? 100,
    judge: { kind: c.get<string>('judge.kind') ?? 'human', profile: c.get<string>('judge.profile') ?? '' },
    variablesProfile: (c.get<string>('variables.profile') ?? '').trim(),
  };
}

/**
 * Where runs started in this window send live OpenTelemetry spans (issue 45): the setting `loupe.otel.endpoint`
 * (empty: nothing is sent), headers from the window's `OTEL_EXPORTER_OTLP_HEADERS` (never from settings, which may be
 * synced), texts bounded by `loupe.otel.maxTextChars`.
 * @returns undefined when no endpoint is set.
 * @throws LoupeInputError naming the setting (or the variable) when the endpoint or the headers are not valid.
 */
export function otelExportSettings(): OtelExportConfig | undefined {
  const c = vscode.workspace.getConfiguration('loupe');
  const endpoint = (c.get<string>('otel.endpoint') ?? '').trim();
  if (!endpoint) return undefined;
  const max = c.get<number>('otel.maxTextChars') ?? 4096;
  return {
    endpoint: parseOtelEndpoint(endpoint, 'the setting loupe.otel.endpoint'),
    headers: parseOtelHeaders([], process.env.OTEL_EXPORTER_OTLP_HEADERS, 'OTEL_EXPORTER_OTLP_HEADERS'),
    maxTextChars: Math.max(64, Math.floor(max)),
  };
}

/**
 * The annotator of this window — who annotates, reviews, tags failures, authors checklists and ground truth, and adds
 * hints to runs: the `loupe.annotator` setting, else git user.name, else the OS user.
 */
export function currentAnnotator(): string {
  return annotatorId(process.env, vscode.workspace.getConfiguration('loupe').get<string>('annotator') ?? '');
}

/** Queue options of the settings `loupe.annotation.*`: annotators per item (≥ 1), reservation time (ms), blind queues. */
export function annotationSettings(): { reviewers: number; reservationMs: number; blind: boolean } {
  const c = vscode.workspace.getConfiguration('loupe.annotation');
  return {
    reviewers: Math.max(1, Math.floor(c.get<number>('reviewersPerItem') ?? 1)),
    reservationMs: Math.max(1, c.get<number>('reservationMinutes') ?? 30) * 60_000,
    blind: c.get<boolean>('blind') ?? true,
  };
}

/** The rubric of the `loupe.review.rubric` setting (empty: the benchmark's criteria, else the default rubric). */
export function reviewRubric(): string[] {
  const v = vscode.workspace.getConfiguration('loupe.review').get<unknown>('rubric');
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && !!x.trim()) : [];
}

/** Failure-analysis sampling of the settings `loupe.failures.perStratum` and `loupe.failures.seed`. */
export function failureSampling(): { perStratum: number; seed: number } {
  const c = vscode.workspace.getConfiguration('loupe.failures');
  return { perStratum: c.get<number>('perStratum') ?? 10, seed: c.get<number>('seed') ?? 0 };
}

/** BLADE decision review of the settings `loupe.bladeReview.*`: decisions sampled per dataset, seed, consensus rule. */
export function bladeReviewSettings(): { perDataset: number; seed: number; consensus: 'all-yes' | 'majority' } {
  const c = vscode.workspace.getConfiguration('loupe.bladeReview');
  return {
    perDataset: c.get<number>('perDataset') ?? 40,
    seed: c.get<number>('seed') ?? 0,
    consensus: c.get<'all-yes' | 'majority'>('consensus') ?? 'all-yes',
  };
}
