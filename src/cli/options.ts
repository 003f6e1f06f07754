/**
 * The options of `loupe` commands, declared once (issue 40): each option has its name, type, short name, default and
 * help; option groups shared by several commands (store, suite, judge, output, kernel, ...) are declared once in
 * `option-groups.ts`, and a command composes groups with its own options. The `node:util` `parseArgs` configuration
 * AND the usage text are generated from the declaration, so a flag cannot be parsed without being documented, nor
 * documented without being parsed (`test/unit/cli/options.test.ts` checks every command).
 */
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import type { CliCommand, CliIo } from './types.ts';

/** One option of a command: `--name` (or `-short`). */
export interface CliOption {
  /** `string` takes a value; `boolean` is a switch. */
  readonly type: 'string' | 'boolean';
  /** Repeatable: every value is kept, in order. */
  readonly multiple?: boolean;
  /** A one-letter alias (`-j`). */
  readonly short?: string;
  /** The value when the option is not given (shown in the help). */
  readonly default?: string;
  /** How the value is written in the help (`FILE`, `N`, `llm|reference`); none for a switch. */
  readonly value?: string;
  /** One line of help. */
  readonly help: string;
}

/** Options by name (without `--`). */
export type CliOptions = { readonly [name: string]: CliOption };

/** A titled group of options, shared by several commands or a command's own. */
export interface OptionGroup<O extends CliOptions = CliOptions> {
  readonly title: string;
  readonly options: O;
}

/** Declares a group of options (the literal types are kept, so parsed values are typed). */
export function optionGroup<const O extends CliOptions>(title: string, options: O): OptionGroup<O> {
  return { title, options };
}

/** The options of a list of groups, as one object type. */
type Merged<G> = G extends readonly [infer H, ...infer R]
  ? (H extends OptionGroup<infer O> ? O : unknown) & Merged<R>
  : unknown;

/** The parsed values of a declaration, typed as `parseArgs` types them. */
type Values<O> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O & ParseArgsOptionsConfig; allowPositionals: true; strict: true }>
>['values'];

/**
 * One way a command parses its arguments: the usage line, the groups it composes, the groups built when it runs
 * (from the benchmark registry: loader flags, native-output flags), and notes.
 */
export interface CommandDeclaration<O = CliOptions> {
  /** The usage line after `loupe` (`run`, `blade gt <show|versions|...>`), without options. */
  readonly synopsis: string;
  /** Static groups (shared ones and the command's own), in help order. */
  readonly groups: readonly OptionGroup[];
  /** Groups built from the registry each time (a test-only benchmark registered later is included). */
  readonly dynamic: ReadonlyArray<() => OptionGroup>;
  /** Whether positional arguments are taken. */
  readonly positionals: boolean;
  /** Text after the options (what the command does, value formats, what `--json` prints). */
  readonly notes: () => string;
  /** Type-level only: the merged static options. */
  readonly __options?: O;
}

/**
 * Declares how a command parses its arguments.
 * @param d `synopsis` (after `loupe`), `groups` (static), `dynamic` (registry-built groups), `positionals`, `notes`.
 * @throws Error when two static groups declare the same option name (a programming error).
 */
export function declareCommand<const G extends readonly OptionGroup[]>(d: {
  synopsis: string;
  groups: G;
  dynamic?: ReadonlyArray<() => OptionGroup>;
  positionals?: boolean;
  notes?: string | (() => string);
}): CommandDeclaration<Merged<G>> {
  const notes = d.notes;
  const decl: CommandDeclaration<Merged<G>> = {
    synopsis: d.synopsis,
    groups: d.groups,
    dynamic: d.dynamic ?? [],
    positionals: d.positionals ?? false,
    notes: typeof notes === 'function' ? notes : () => notes ?? '',
  };
  optionsOf(decl, false); // duplicate names fail at load
  return decl;
}

/** Every group of a declaration: static, then built. */
export function groupsOf(decl: CommandDeclaration<unknown>): OptionGroup[] {
  return [...decl.groups, ...decl.dynamic.map((g) => g())];
}

/**
 * Every option a declaration parses, by name.
 * @param withDynamic include the registry-built groups.
 * @throws Error naming an option declared twice.
 */
export function optionsOf(decl: CommandDeclaration<unknown>, withDynamic = true): Record<string, CliOption> {
  const out: Record<string, CliOption> = {};
  for (const g of withDynamic ? groupsOf(decl) : decl.groups) {
    for (const [name, o] of Object.entries(g.options)) {
      if (out[name]) throw new Error(`loupe ${decl.synopsis}: option --${name} is declared twice (group '${g.title}')`);
      out[name] = o;
    }
  }
  return out;
}

/** The `parseArgs` options of a declaration (generated; the help fields are left out). */
export function parseConfigOf(decl: CommandDeclaration<unknown>): ParseArgsOptionsConfig {
  const out: ParseArgsOptionsConfig = {};
  for (const [name, o] of Object.entries(optionsOf(decl))) {
    out[name] = {
      type: o.type,
      ...(o.multiple ? { multiple: true } : {}),
      ...(o.short ? { short: o.short } : {}),
      ...(o.default !== undefined ? { default: o.multiple ? [o.default] : o.default } : {}),
    };
  }
  return out;
}

/**
 * Parses a command's arguments with `node:util` `parseArgs`, strictly, from its declaration.
 * @returns `values` typed by the static options, `extra` the values of the registry-built options by name,
 *   `positionals`.
 * @throws TypeError (`ERR_PARSE_ARGS_*`) for an unknown option or a missing value; `main` reports it as a usage error.
 */
export function parseCommand<O>(
  decl: CommandDeclaration<O>,
  argv: readonly string[],
): {
  values: Values<O>;
  extra: Readonly<Record<string, string | boolean | string[] | undefined>>;
  positionals: string[];
} {
  const r = parseArgs({
    args: [...argv],
    options: parseConfigOf(decl),
    allowPositionals: decl.positionals,
    strict: true,
  });
  const dynamicNames = new Set(decl.dynamic.flatMap((g) => Object.keys(g().options)));
  const extra: Record<string, string | boolean | string[] | undefined> = {};
  for (const n of dynamicNames) extra[n] = r.values[n] as string | boolean | string[] | undefined;
  return { values: r.values as Values<O>, extra, positionals: r.positionals };
}

/** `--name VALUE` (`-s, --name VALUE`) as the help shows it. */
export function optionSignature(name: string, o: CliOption): string {
  const value = o.type === 'string' ? ` ${o.value ?? 'VALUE'}` : '';
  return `${o.short ? `-${o.short}, ` : ''}--${name}${value}${o.multiple ? ' ...' : ''}`;
}

/**
 * The usage text of a declaration, generated: `loupe SYNOPSIS [options]`, then each group's options (signature,
 * help, default), then the notes.
 */
export function usageText(decl: CommandDeclaration<unknown>): string {
  const groups = groupsOf(decl).filter((g) => Object.keys(g.options).length);
  const rows = groups.map((g) => ({
    title: g.title,
    rows: Object.entries(g.options).map(
      ([n, o]) =>
        [optionSignature(n, o), `${o.help}${o.default !== undefined ? ` (default ${o.default})` : ''}`] as const,
    ),
  }));
  const w = Math.min(30, Math.max(0, ...rows.flatMap((g) => g.rows.map(([s]) => s.length))));
  const lines = [`loupe ${decl.synopsis}${groups.length ? ' [options]' : ''}`];
  for (const g of rows) {
    lines.push(`  ${g.title}:`);
    for (const [sig, help] of g.rows) {
      lines.push(sig.length > w ? `    ${sig}\n    ${' '.repeat(w)}  ${help}` : `    ${sig.padEnd(w)}  ${help}`);
    }
  }
  const notes = decl.notes();
  if (notes) lines.push(notes);
  return lines.join('\n');
}

/** The usage text of a command with several declarations (subcommands parsed apart): each, one after the other. */
export function commandUsage(decls: ReadonlyArray<CommandDeclaration<unknown>>): string {
  return decls.map(usageText).join('\n');
}

/**
 * A `loupe` command whose usage text is generated from its declarations.
 * @param c `name`, `summary` (one line for `loupe --help`), `declarations`, `run`.
 */
export function defineCommand(c: {
  name: string;
  summary: string;
  declarations: ReadonlyArray<CommandDeclaration<unknown>>;
  run: (argv: string[], io: CliIo) => Promise<number>;
}): CliCommand {
  return {
    name: c.name,
    summary: c.summary,
    declarations: c.declarations,
    get usage() {
      return commandUsage(c.declarations);
    },
    run: c.run,
  };
}
