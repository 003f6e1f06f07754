/**
 * Named options of a benchmark, declared once: the tool-set options given when a block is run
 * (`--tool-option name=value`, recorded with the run) and the scoring options given when runs are scored
 * (`--option name=value`, echoed in every score). One declaration serves parsing (once, into typed values),
 * `--help` text, validation messages and the echo, always in the spelling the user types.
 * Source: issue 12 "Options".
 */
import { resolve as pathResolve } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import { globMatcher } from '../suites/glob.ts';

/** A typed option value. */
export type OptionValue = string | number | boolean;

/** One declared option. */
export interface OptionSpec {
  /** The name as typed (`tolerance_floor`, `finishRule`): parsing, help and the echo use it verbatim. */
  name: string;
  /** `enum` takes one of `values`; `number` any finite number (≥ `min` when given); `integer` a whole number; `bool` true|false; `path` / `string` any text. */
  type: 'enum' | 'number' | 'integer' | 'bool' | 'path' | 'string';
  values?: readonly string[];
  min?: number;
  /** Inclusive upper bound for numbers. */
  max?: number;
  /** Inclusive lower bound is `min`; `exclusiveMin` makes it strict (a timeout must be > 0). */
  exclusiveMin?: boolean;
  /** The value when the option is not given; `undefined` = the benchmark decides per block (the help says how). */
  default?: OptionValue;
  /** One line for `--help`. */
  help: string;
  /** Where the option and its default come from (paper section or benchmark file). */
  source: string;
  /** Per-preset values (`official`, `paper`, ...) for the fidelity work: a preset sets these before user options. */
  presets?: Readonly<Record<string, OptionValue>>;
}

/** Parsed options by name. An option without a default and not given is absent. */
export type OptionValues = Record<string, OptionValue>;

/**
 * Parses one value against its spec.
 * @param subject what to name in an error (e.g. `option tolerance`, `--tool-option finishRule`).
 * @throws LoupeInputError naming `subject`, the value and what is allowed.
 */
export function parseOptionValue(spec: OptionSpec, raw: string, subject: string): OptionValue {
  const v = raw.trim();
  switch (spec.type) {
    case 'enum':
      if (!spec.values?.includes(v)) {
        throw new LoupeInputError(subject, `must be one of ${spec.values?.join(', ')}, got '${raw}'`);
      }
      return v;
    case 'bool':
      if (v !== 'true' && v !== 'false') throw new LoupeInputError(subject, `must be true or false, got '${raw}'`);
      return v === 'true';
    case 'number':
    case 'integer': {
      const n = Number(v);
      if (v === '' || !Number.isFinite(n)) throw new LoupeInputError(subject, `must be a number, got '${raw}'`);
      if (spec.type === 'integer' && !Number.isInteger(n)) {
        throw new LoupeInputError(subject, `must be a whole number, got '${raw}'`);
      }
      if (spec.min !== undefined && (spec.exclusiveMin ? n <= spec.min : n < spec.min)) {
        throw new LoupeInputError(
          subject,
          spec.exclusiveMin && spec.min === 0
            ? `must be a positive number, got '${raw}'`
            : `must be ${spec.exclusiveMin ? '>' : '≥'} ${spec.min}, got '${raw}'`,
        );
      }
      if (spec.max !== undefined && n > spec.max) {
        throw new LoupeInputError(subject, `must be ≤ ${spec.max}, got '${raw}'`);
      }
      return n;
    }
    default:
      if (!v) throw new LoupeInputError(subject, 'must not be empty');
      return v;
  }
}

/**
 * Parses raw `name=value` strings against a declaration; every default is filled in.
 * @param specs the declaration; `raw` values by name (unknown names are an error);
 *   `subject(name)` how to name an option in errors (default `option <name>`).
 * @returns typed values: defaults, then `raw`.
 * @throws LoupeInputError naming an unknown option (with the known ones) or a bad value.
 */
export function parseOptions(
  specs: readonly OptionSpec[],
  raw: Readonly<Record<string, string>>,
  subject: (name: string) => string = (n) => `option ${n}`,
  what = 'this benchmark',
): OptionValues {
  const out: OptionValues = {};
  for (const s of specs) if (s.default !== undefined) out[s.name] = s.default;
  for (const [k, v] of Object.entries(raw)) {
    const spec = specs.find((s) => s.name === k);
    if (!spec) {
      throw new LoupeInputError(
        subject(k),
        `unknown for ${what} (options: ${specs.map((s) => s.name).join(', ') || 'none'})`,
      );
    }
    out[k] = parseOptionValue(spec, v, subject(k));
  }
  return out;
}

/**
 * Splits `name=value` pairs (repeatable CLI flags) into raw values.
 * @param flag the flag to name in errors (`--option`, `--tool-option`).
 * @throws LoupeInputError(flag) for a pair without `=` or without a name.
 */
export function splitOptionPairs(pairs: readonly string[] | undefined, flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs ?? []) {
    const at = p.indexOf('=');
    if (at <= 0) throw new LoupeInputError(flag, `expected name=value, got '${p}'`);
    out[p.slice(0, at).trim()] = p.slice(at + 1).trim();
  }
  return out;
}

/**
 * The help lines of a declaration: `name=a|b (default a): help`.
 * @returns one line per option, indented by `indent` spaces.
 */
export function optionHelpLines(specs: readonly OptionSpec[], indent = 4): string[] {
  const pad = ' '.repeat(indent);
  return specs.map((s) => {
    const shape =
      s.type === 'enum'
        ? s.values!.join('|')
        : s.type === 'bool'
          ? 'true|false'
          : s.type === 'path'
            ? 'FILE'
            : s.type === 'string'
              ? 'TEXT'
              : 'N';
    const def = s.default !== undefined ? ` (default ${String(s.default)})` : '';
    return `${pad}${s.name}=${shape}${def}: ${s.help}`;
  });
}

/** `a=b c=d` as echoed in text output (objects as JSON). */
export function formatOptionEcho(values: Readonly<Record<string, unknown>>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(' ');
}

/**
 * The scoring presets every benchmark answers to (issue 21): `official` reproduces the benchmark's published code
 * (its numbers compare with the published tables; the default), `paper` follows the paper's text where the two differ.
 * A benchmark's option takes a preset's value from {@link OptionSpec.presets}; an option without one keeps its default.
 */
export const SCORE_PRESETS = ['official', 'paper'] as const;
/** A scoring preset name. */
export type ScorePreset = (typeof SCORE_PRESETS)[number];
/** The preset of a score when none is given. */
export const DEFAULT_SCORE_PRESET: ScorePreset = 'official';
/** The label of a score stored before presets existed (its options are whatever that version used). */
export const LEGACY_PRESET = 'legacy';

/**
 * Checks a preset name.
 * @param subject what to name in an error (`--preset` on the CLI, `preset` elsewhere).
 * @returns the preset. @throws LoupeInputError naming `subject` for an unknown name.
 */
export function parsePreset(raw: string | undefined, subject = 'preset'): ScorePreset {
  if (raw === undefined) return DEFAULT_SCORE_PRESET;
  const v = raw.trim();
  if (!(SCORE_PRESETS as readonly string[]).includes(v)) {
    throw new LoupeInputError(subject, `must be one of ${SCORE_PRESETS.join(', ')}, got '${raw}'`);
  }
  return v as ScorePreset;
}

/**
 * Parses options the way a preset resolves them: defaults, then the preset's values, then `raw` (individual
 * options override the preset).
 * @param preset `official` | `paper`; other arguments as {@link parseOptions}.
 * @returns typed values of every option that has a default or a preset value.
 * @throws LoupeInputError naming an unknown option or a bad value.
 */
export function parseOptionsWithPreset(
  specs: readonly OptionSpec[],
  preset: ScorePreset,
  raw: Readonly<Record<string, string>>,
  subject: (name: string) => string = (n) => `option ${n}`,
  what = 'this benchmark',
): OptionValues {
  const base = parseOptions(specs, {}, subject, what);
  for (const s of specs) if (s.presets?.[preset] !== undefined) base[s.name] = s.presets[preset];
  const given = parseOptions(specs, raw, subject, what);
  for (const k of Object.keys(raw)) base[k] = given[k]!;
  return base;
}

/**
 * Help lines of a declaration with the preset values: `name=a|b (official a, paper b): help`.
 * @returns one line per option, indented by `indent` spaces.
 */
export function optionPresetHelpLines(specs: readonly OptionSpec[], indent = 4): string[] {
  const lines = optionHelpLines(specs, indent);
  return specs.map((s, i) => {
    if (!s.presets) return lines[i]!;
    const vals = SCORE_PRESETS.map((p) => `${p} ${String(s.presets![p] ?? s.default ?? '—')}`).join(', ');
    return lines[i]!.replace(/ \(default [^)]*\)(?=: )|(?=: )/, ` (${vals})`);
  });
}

/**
 * One loader option of a benchmark (issue 40): how its loader is told where the data is beyond the suite root
 * (DDR's `entities`, `database`, ...). Declared once in the benchmark's definition (`loadOptions`); every surface that
 * loads a suite (the CLI's `run`, `score`, `blocks`, `mcp`, `checklist`) builds its flag and help from it and resolves
 * a path the same way (against the working folder).
 */
export interface LoadOptionSpec {
  /** The name as typed (`database` for `--database`). */
  readonly name: string;
  /** The member of the loader's options it sets (`metadataDir`). */
  readonly key: string;
  /**
   * `path`: a file or folder, resolved against the working folder; `string`: text as given; `globs`: comma-separated
   * globs, given to the loader as a predicate on names (`tableFilter`).
   */
  readonly type: 'path' | 'string' | 'globs';
  /** How the value is written in help (`FILE`, `DIR`, `TABLE.COLUMN`). */
  readonly value: string;
  /** One line for `--help`. */
  readonly help: string;
}

/**
 * The loader options given as raw text (a flag's value by option name), as the loader takes them: a `path` resolved
 * against `cwd`, `globs` turned into a predicate, `string` as given; options not given are absent.
 * @param specs the benchmark's `loadOptions`; `raw` values by option name (undefined: not given).
 * @param subject how to name an option in errors (`--tables`).
 * @returns loader options keyed by each spec's `key`.
 * @throws LoupeInputError naming the option for a bad glob (`suites/glob.ts`).
 */
export function loadOptionValues(
  specs: readonly LoadOptionSpec[],
  raw: Readonly<Record<string, string | undefined>>,
  cwd: string,
  subject: (name: string) => string = (n) => `--${n}`,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const s of specs) {
    const v = raw[s.name];
    if (!v) continue; // not given (an empty value counts as not given, as it always has)
    if (s.type === 'path') out[s.key] = pathResolve(cwd, v);
    else if (s.type === 'globs') {
      const ms = v.split(',').map((g) => globMatcher(g.trim(), subject(s.name)));
      out[s.key] = (name: string) => ms.some((m) => m(name));
    } else out[s.key] = v;
  }
  return out;
}
