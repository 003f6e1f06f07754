import { LOUPE_VERSION } from '../core/version.ts';
import { commands } from './commands.ts';
import { UsageError, type CliIo } from './types.ts';
import { didYouMean } from './suggest.ts';
import { optionsOf } from './options.ts';
import { neutraliseControls, oneLine } from '../core/util/text-safety.ts';

export function helpText(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `loupe ${LOUPE_VERSION} — run and judge LLM data-analysis agents on LongDA, BLADE, DDR-Bench and AnalystBench`,
    '',
    'Usage: loupe <command> [options]     (loupe <command> --help for its options)',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Environment: LOUPE_SHARED (benchmark data folder, default ../shared), LOUPE_PYTHON (interpreter),',
    '             OPENAI_API_KEY or the variable named by --api-key-env (model key; never stored).',
    '',
  ].join('\n');
}

/**
 * Runs the CLI with the given arguments.
 * @returns the exit code: 0 success, 1 failure, 2 usage error.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.out(helpText());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    io.out(`${LOUPE_VERSION}\n`);
    return 0;
  }
  const cmd = commands.find((c) => c.name === name);
  if (!cmd) {
    io.err(
      `loupe: unknown command '${oneLine(name)}'.${didYouMean(
        name,
        commands.map((c) => c.name),
      )}\n\n${helpText()}`,
    );
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`${cmd.usage}\n\n${cmd.summary}\n`);
    return 0;
  }
  // Issue 38: whatever a command prints may hold agent-derived text (agent and client names, model text, answers,
  // insight text, file names, a binary file's bytes in an error): no control character reaches the terminal raw.
  // Loupe itself prints none (`\n` and `\t` are kept). The MCP stdio transport writes to process.stdout directly.
  const safeIo: CliIo = { ...io, out: (s) => io.out(neutraliseControls(s)), err: (s) => io.err(neutraliseControls(s)) };
  try {
    return await cmd.run(rest, safeIo);
  } catch (e) {
    if (e instanceof UsageError) {
      safeIo.err(`loupe ${name}: ${e.message}\n${e.showUsage ? `usage: ${cmd.usage}\n` : ''}`);
      return 2;
    }
    if (e instanceof TypeError && (e as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
      // node:util parseArgs: "Unknown option '--stor'. To specify a positional argument ..." → suggest the nearest option of this command
      const unknown = /Unknown option '(-{1,2}[^']+)'/.exec(e.message)?.[1];
      const known = [...new Set(cmd.declarations.flatMap((d) => Object.keys(optionsOf(d)).map((n) => `--${n}`)))];
      const msg = unknown ? `unknown option '${unknown}'.${didYouMean(unknown, known)}` : e.message;
      safeIo.err(`loupe ${name}: ${msg}\nusage: ${cmd.usage}\n`);
      return 2;
    }
    safeIo.err(`loupe ${name}: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
