/**
 * DDR's part of replay (issue 6, issue 40): its `execute_query` calls are re-run against the same database in the
 * contained query process and their observations compared with the recorded ones.
 */
import { errorMessage } from '../../util/errors.ts';
import type { ReplayContext, ReplayTool } from '../types.ts';
import './items.ts';
import { SqlRunner, defaultQueryCaps } from './sql-tool.ts';

/** The database a replay queries: the one given, else the block's. */
const databaseOf = (ctx: ReplayContext): string | undefined => ctx.database ?? ctx.block?.visible.database?.path;

/** Replays `execute_query` calls (default caps; per-query limit the run's, else the tool's 30,000 ms). */
export const DDR_SQL_REPLAY: ReplayTool = {
  tool: 'execute_query',
  kind: 'sql',
  actions: 'SQL queries',
  missing: (ctx) => (databaseOf(ctx) ? null : 'the database'),
  open(ctx) {
    const runner = new SqlRunner(databaseOf(ctx)!, { timeoutMs: ctx.timeoutMs ?? 30_000, sandbox: ctx.sandbox });
    return {
      async call(argumentsText) {
        let sql: string;
        try {
          sql = String((JSON.parse(argumentsText) as { sql?: unknown }).sql ?? '');
        } catch {
          return null; // malformed arguments never reached the database
        }
        let observation: string;
        try {
          observation = JSON.stringify(await runner.query(sql, defaultQueryCaps), null, 2);
        } catch (e) {
          observation = JSON.stringify({ error: errorMessage(e) }, null, 2);
        }
        return { code: sql, observation };
      },
      close: () => runner.close(),
    };
  },
};
