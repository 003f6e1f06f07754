/**
 * `loupe store copy --from LOCATION --to LOCATION`: copies a run store into another, SQLite file ⇄ PostgreSQL team
 * store (or file to file), ids preserved, in one transaction of the target; copying again changes nothing.
 * Source: issue 26 "Move data".
 */
import { copyStore } from '../core/store/copy.ts';
import { openStoreAt } from '../core/store/open.ts';
import type { RunStore } from '../core/store/types.ts';
import { openExistingStore, storeLocation } from './store-arg.ts';
import { STORE_GRANT, storeGrant } from './store-grant.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { UsageError } from './types.ts';

const COPY = declareCommand({
  synopsis: 'store copy',
  positionals: true, // refused with a message of its own
  groups: [
    optionGroup('copy', {
      from: { type: 'string', value: 'FILE|URL', help: 'the store copied (required)' },
      to: { type: 'string', value: 'FILE|URL', help: 'the store copied into (required)' },
    }),
    JSON_OPTIONS,
  ],
  notes: `  Copies every run, step, cell, event, judgement, score, annotation, queue, checklist and ground-truth version of
  --from into --to (created if it is a new SQLite file; a PostgreSQL database must exist), ids preserved, in one
  transaction: a failed copy writes nothing, a repeated copy adds nothing. Rows only --to holds are kept.
  A row --to refuses (a value its column type rejects) is named (table and key) and left out, the rest is copied,
  and the exit code is 1. Annotations, checklist and ground-truth versions are append-only: one --to already holds
  under the same key with other content is kept, never overwritten, and named the same way ("refused: ...").
  A URL is postgres://USER@HOST:PORT/DB?passwordEnv=VAR (the password from VAR or PGPASSWORD, never in the URL).`,
});

export const storeCommand = defineCommand({
  name: 'store',
  summary:
    'copy a run store between a SQLite file and a PostgreSQL team store (ids preserved, idempotent); grant a team store role',
  declarations: [COPY, STORE_GRANT],
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'grant') return storeGrant(rest, io);
    if (sub !== 'copy') {
      throw new UsageError(sub ? `unknown subcommand '${sub}' (known: copy, grant)` : 'give a subcommand: copy, grant');
    }
    const { values: v, positionals } = parseCommand(COPY, rest);
    if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    if (!v.from || !v.to) throw new UsageError('give both --from and --to');
    const [a, b] = [storeLocation(io, v.from), storeLocation(io, v.to)];
    if (JSON.stringify(a) === JSON.stringify(b)) throw new UsageError('--from and --to are the same store');
    const from = await openExistingStore(io, v.from);
    let to: RunStore | undefined;
    try {
      to = await openStoreAt(b, { cwd: io.cwd, env: io.env });
      const rep = await copyStore(from, to);
      if (v.json) io.out(JSON.stringify(rep, null, 2) + '\n');
      else {
        io.out(`copied ${rep.from} → ${rep.to}\n`);
        for (const t of rep.tables) {
          if (t.rows || t.added) io.out(`  ${t.table.padEnd(24)} ${String(t.rows).padStart(7)} rows, ${t.added} new\n`);
        }
      }
      // rows the target refused: named (table and key), the rest is copied; the exit code says not everything was
      for (const f of rep.failed ?? []) {
        io.err(
          `not copied: ${f.table} ${Object.entries(f.key)
            .map(([k, x]) => `${k}=${String(x)}`)
            .join(' ')}: ${f.error}\n`,
        );
      }
      return rep.failed?.length ? 1 : 0;
    } finally {
      await to?.close();
      await from.close();
    }
  },
});
