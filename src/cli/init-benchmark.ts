import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { draftManifest } from '../core/benchmarks/manifest/init.ts';
import { UsageError } from './types.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'init-benchmark DIR --sample FILE',
  groups: [
    optionGroup('init-benchmark', {
      sample: {
        type: 'string',
        value: 'FILE',
        help: 'a .jsonl, .json or .csv file of items in DIR (the fields are guessed from its first row)',
      },
      force: { type: 'boolean', help: 'overwrite an existing loupe-benchmark.yaml' },
    }),
  ],
  positionals: true,
  notes:
    '  Writes DIR/loupe-benchmark.yaml, commented, valid against the manifest schema; then: loupe blocks --root DIR.',
});

/** `loupe init-benchmark DIR --sample FILE`: drafts a benchmark manifest (issue 44). */
export const initBenchmarkCommand = defineCommand({
  name: 'init-benchmark',
  summary: 'draft a commented benchmark manifest (loupe-benchmark.yaml) for a folder from a sample item file',
  declarations: [DECL],
  async run(argv, io) {
    const { values, positionals } = parseCommand(DECL, argv);
    if (positionals.length !== 1) {
      throw new UsageError('give the benchmark folder: loupe init-benchmark DIR --sample FILE');
    }
    if (!values.sample) throw new UsageError('--sample FILE is required (a .jsonl, .json or .csv file of items)');
    const dir = resolve(io.cwd, positionals[0]!);
    const out = join(dir, 'loupe-benchmark.yaml');
    if (existsSync(out) && !values.force) throw new UsageError(`${out} exists (--force to overwrite)`);
    writeFileSync(out, draftManifest(dir, resolve(io.cwd, values.sample)));
    io.out(`wrote ${out}\n`);
    return 0;
  },
});
