import { fetchSuite } from '../core/suites/fetch.ts';
import { FETCHABLE, getSource } from '../core/benchmarks/registry.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { UsageError } from './types.ts';

const FETCH = declareCommand({
  synopsis: `fetch <${FETCHABLE.join('|')}>`,
  positionals: true,
  groups: [
    optionGroup('fetch', {
      dest: { type: 'string', value: 'DIR', help: 'where the suite is written (required)' },
      mirror: { type: 'string', value: 'URL', help: 'download from this mirror instead of the official source' },
      only: { type: 'string', multiple: true, value: 'GLOB', help: 'only the files matching (repeatable)' },
    }),
    JSON_OPTIONS,
  ],
});

/** `loupe fetch`: downloads a suite from its official source (issue 3 "Download"). */
export const fetchCommand = defineCommand({
  name: 'fetch',
  summary: 'download a benchmark suite from its official source (resumable, verified)',
  declarations: [FETCH],
  async run(argv, io) {
    const { values, positionals } = parseCommand(FETCH, argv);
    if (positionals.length !== 1) throw new UsageError('name exactly one suite');
    if (!values.dest) throw new UsageError('--dest is required');
    const def = getSource(positionals[0]!);
    let last = -1;
    const r = await fetchSuite(def, values.dest, {
      ...(values.mirror ? { mirror: values.mirror } : {}),
      ...(values.only ? { only: values.only } : {}),
      onProgress: (p) => {
        const pct = p.total ? Math.floor((100 * p.done) / p.total) : 0;
        if (pct !== last) io.err(`download ${pct}% ${p.message ?? ''}\n`);
        last = pct;
      },
    });
    if (values.json) io.out(JSON.stringify(r, null, 2) + '\n');
    else {
      const count = (s: string) => r.files.filter((f) => f.status === s).length;
      io.out(
        `${def.title} → ${r.dest}: ${count('downloaded')} downloaded, ${count('resumed')} resumed, ${count('present')} already present, ${count('missing')} missing, ${count('failed')} failed\n`,
      );
      for (const f of r.files.filter((x) => x.status === 'missing' || x.status === 'failed')) {
        io.out(`  ${f.status}: ${f.dest}: ${f.reason ?? ''}\n`);
      }
      io.out(
        `load with: loupe blocks --suite ${def.suite === 'mimic-iv-demo' ? 'ddr' : def.suite} --root ${r.loadRoot}${def.suite === 'mimic-iv-demo' ? ' --entities patients.subject_id' : ''}\n`,
      );
    }
    return r.ok ? 0 : 1;
  },
});
