/** The table of `loupe` subcommands. Add new subcommands here (one file each under src/cli/). */
import { doctorCommand } from './doctor.ts';
import type { CliCommand } from './types.ts';

export const commands: CliCommand[] = [doctorCommand];
