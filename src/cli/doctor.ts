import { runChecks } from '../core/env/doctor.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DOCTOR = declareCommand({
  synopsis: 'doctor',
  groups: [
    optionGroup('doctor', {
      python: {
        type: 'string',
        value: 'PATH',
        help: 'the Python interpreter to check (default $LOUPE_PYTHON, else found)',
      },
    }),
    JSON_OPTIONS,
  ],
});

export const doctorCommand = defineCommand({
  name: 'doctor',
  summary: 'check Node, Python (pandas), bubblewrap and SQLite on this machine',
  declarations: [DOCTOR],
  async run(argv, io) {
    const { values } = parseCommand(DOCTOR, argv);
    const checks = await runChecks({ python: values.python ?? io.env.LOUPE_PYTHON ?? '' });
    if (values.json) io.out(JSON.stringify(checks, null, 2) + '\n');
    else for (const c of checks) io.out(`${c.ok ? '✔' : '✘'} ${c.name}: ${c.detail}\n`);
    return checks.every((c) => c.ok) ? 0 : 1;
  },
});
