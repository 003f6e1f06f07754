import { parseArgs } from 'node:util';
import { fetchSuite } from '../core/suites/fetch.ts';
import { FETCHABLE, getSource } from '../core/benchmarks/registry.ts';
import { UsageError, type CliCommand } from './types.ts';

/** `loupe fetch`: downloads a suite from its official source (issue 3 "Download"). */
export const fetchCommand: CliCommand = {
  name: 'fetch',
  summary: 'download a benchmark suite from its official source (resumable, verified)',
  usage: `loupe fetch <${FETCHABLE.join('|')}> --dest DIR [--mirror URL] [--only GLOB]... [--json]`,
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { dest: { type: 'string' }, mirror: { type: 'string' }, only: { type: 'string', multiple: true }, json: { type: 'boolean' } },
    });
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
      io.out(`${def.title} → ${r.dest}: ${count('downloaded')} downloaded, ${count('resumed')} resumed, ${count('present')} already present, ${count('missing')} missing, ${count('failed')} failed\n`);
      for (const f of r.files.filter((x) => x.status === 'missing' || x.status === 'failed')) io.out(`  ${f.status}: ${f.dest}: ${f.reason ?? ''}\n`);
      io.out(`load with: loupe blocks --suite ${def.suite === 'mimic-iv-demo' ? 'ddr' : def.suite} --root ${r.loadRoot}${def.suite === 'mimic-iv-demo' ? ' --entities patients.subject_id' : ''}\n`);
    }
    return r.ok ? 0 : 1;
  },
};
