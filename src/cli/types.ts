/** Shape of one `loupe` subcommand. Each lives in its own file under src/cli/ and is listed in commands.ts. */
import type { CommandDeclaration } from './options.ts';

export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface CliCommand {
  name: string;
  /** One line for `loupe --help`. */
  summary: string;
  /** How it parses its arguments (one declaration; several when subcommands parse apart): options in groups, notes. */
  readonly declarations: ReadonlyArray<CommandDeclaration<unknown>>;
  /** Full usage text for `loupe <name> --help`, generated from `declarations` (`defineCommand`). */
  readonly usage: string;
  /** Returns the process exit code. */
  run(argv: string[], io: CliIo): Promise<number>;
}

/** Thrown for a bad command line; printed with the command's usage (unless `showUsage` is false) and exit code 2. */
export class UsageError extends Error {
  readonly showUsage: boolean;
  constructor(message: string, opts: { showUsage?: boolean } = {}) {
    super(message);
    this.showUsage = opts.showUsage ?? true;
  }
}
