/** Entry point of the `loupe` CLI (built to dist/cli.js). All logic lives in src/cli and src/core. */
import type { CliIo } from './cli/types.ts';
import { neutraliseControls } from './core/util/text-safety.ts';

// `loupe blocks --json | head`: the reader went away; stop quietly like other Unix tools.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
}

const io: CliIo = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  env: process.env,
  cwd: process.cwd(),
};
const argv = process.argv.slice(2);
const MIN_NODE = 22;
const major = Number(process.versions.node.split('.')[0]);

/**
 * Loupe's native module (better-sqlite3 13) crashes older Node with a segmentation fault and no message, so the
 * version is checked before any module that loads it: only `doctor`, `--help` and `--version` run on an older Node.
 */
async function start(): Promise<number> {
  if (major < MIN_NODE && !['doctor', '--help', '-h', 'help', '--version', '-v', undefined].includes(argv[0])) {
    io.err(
      `loupe: Loupe needs Node ≥ ${MIN_NODE}; this is ${process.version}. Run \`bash .ci/setup\` and put \`.cache/node/bin\` first on PATH, or install Node ${MIN_NODE}+.\n`,
    );
    return 1;
  }
  if (major < MIN_NODE && argv[0] === 'doctor') {
    const { doctorCommand } = await import('./cli/doctor.ts');
    return doctorCommand.run(argv.slice(1), io);
  }
  const { main } = await import('./cli/main.ts');
  return main(argv, io);
}

start().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(neutraliseControls(`loupe: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`));
    process.exitCode = 1;
  },
);
