/**
 * `loupe store grant --store URL --role NAME --as annotator|reviewer|owner`: grants a PostgreSQL login exactly what its
 * access allows on a team store (`grantStoreRole`, `src/core/store/roles.ts`). Idempotent; a file store has no roles.
 * Source: issue 39.
 */
import { grantStoreRole, STORE_ACCESS, type StoreAccess } from '../core/store/roles.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, optionGroup, parseCommand } from './options.ts';
import { UsageError, type CliIo } from './types.ts';

/** How `loupe store grant` parses its arguments. */
export const STORE_GRANT = declareCommand({
  synopsis: 'store grant',
  positionals: true, // refused with a message of its own
  groups: [
    optionGroup('grant', {
      role: { type: 'string', value: 'NAME', help: 'the database role (an existing login) granted (required)' },
      as: { type: 'string', value: 'annotator|reviewer|owner', help: 'what it may do (required)' },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  --store is the team store (postgres://OWNER@HOST:PORT/DB?passwordEnv=VAR) and is required.
  Grants the database role NAME (an existing login) exactly what the access allows on the team store, revoking what
  it held there before (run it again to change a role's access; repeating it changes nothing). Connect as the role
  that owns the store's tables (or a superuser).
    annotator  reads runs and their evidence, answers queues: adds annotations (append-only), drafts; no expected
               answers (scores, judge verdicts, checklists, ground truth), and in blind queues no other verdict of
               an item before answering it
    reviewer   an annotator's rights, plus expected answers and every verdict, opens queues, scores, adds
               checklist and ground-truth versions; never changes or deletes an annotation
    owner      member of the role owning the tables: everything (deletes runs, copies and migrates the store)`,
});

/** Runs `loupe store grant` (argv after `grant`). @returns the exit code. @throws UsageError for bad flags. */
export async function storeGrant(argv: string[], io: CliIo): Promise<number> {
  const { values: v, positionals } = parseCommand(STORE_GRANT, argv);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'`);
  if (!v.store) throw new UsageError('give --store postgres://... (the team store whose role to grant)');
  if (!v.role?.trim()) throw new UsageError('give --role NAME (the database login of the expert)');
  if (!v.as || !(STORE_ACCESS as readonly string[]).includes(v.as)) {
    throw new UsageError(`--as must be ${STORE_ACCESS.join(', ')}${v.as ? `, got '${v.as}'` : ''}`);
  }
  const store = await openExistingStore(io, v.store);
  try {
    const rep = await grantStoreRole(store, v.role.trim(), v.as as StoreAccess);
    if (v.json) io.out(JSON.stringify(rep, null, 2) + '\n');
    else if (rep.access === 'owner') {
      io.out(
        `role ${rep.role} is now a member of ${rep.owner}, the owner of ${store.location}'s tables: it may do everything\n`,
      );
    } else {
      io.out(
        `role ${rep.role} is now ${rep.access === 'annotator' ? 'an annotator' : 'a reviewer'} of ${store.location} (anything it held there before was revoked):\n`,
      );
      const byTable = new Map<string, string[]>();
      for (const g of rep.grants) {
        byTable.set(g.table, [
          ...(byTable.get(g.table) ?? []),
          ...g.privileges.map((p) => (g.columns ? `${p} (${g.columns.join(', ')})` : p)),
        ]);
      }
      for (const [t, p] of byTable) io.out(`  ${t.padEnd(26)} ${[...new Set(p)].join(', ')}\n`);
    }
    return 0;
  } finally {
    await store.close();
  }
}
