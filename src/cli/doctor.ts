import { parseArgs } from 'node:util';
import { runChecks } from '../core/env/doctor.ts';
import type { CliCommand } from './types.ts';

export const doctorCommand: CliCommand = {
  name: 'doctor',
  summary: 'check Node, Python (pandas), bubblewrap and SQLite on this machine',
  usage: 'loupe doctor [--python PATH] [--json]',
  async run(argv, io) {
    const { values } = parseArgs({ args: argv, options: { python: { type: 'string' }, json: { type: 'boolean' } } });
    const checks = await runChecks({ python: values.python ?? io.env.LOUPE_PYTHON ?? '' });
    if (values.json) io.out(JSON.stringify(checks, null, 2) + '\n');
    else for (const c of checks) io.out(`${c.ok ? '✔' : '✘'} ${c.name}: ${c.detail}\n`);
    return checks.every((c) => c.ok) ? 0 : 1;
  },
};
