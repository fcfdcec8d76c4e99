import { sql, type RawBuilder } from 'kysely';
import type { StatusTransitions } from '../shared/status-transitions.ts';
import { fixedSql } from './fixed-sql.ts';

// The transition tables (status-transitions.ts) as SQL, for the statements that move statuses in bulk:
// their guards come from the table instead of being written out again next to each update.

/**
 * Statuses as SQL literals for `status in (...)`. Literals, not parameters: a prepared statement is
 * planned generically after a few runs, and only a literal lets the planner see that `status in
 * ('pending')` is the predicate of a partial index (`in` of one literal is planned as `=`).
 */
export function statusListSql(statuses: readonly string[]): RawBuilder<unknown> {
  if (statuses.length === 0) throw new Error('an empty status list is not SQL: `in ()`');
  return fixedSql(`status list ${statuses.join(',')}`, () => sql.join(statuses.map((status) => sql.lit(status))));
}

/** fromStatuses of the table as SQL literals: the `where status in (...)` of a statement moving rows to `to`. */
export function fromStatusesSql<S extends string>(table: StatusTransitions<S>, to: S | readonly S[], among?: readonly S[]): RawBuilder<unknown> {
  return statusListSql(table.fromStatuses(to, among));
}

/**
 * True when a row keeps its status (`from` = `to`) or moves along the table; false for any other move
 * and for statuses the table does not know. For statements that learn each row's new status only per
 * row (reconciliation's outcomes): a `case` over the from-status, one branch per status, built from the
 * table, so it costs a few comparisons per row and never a lookup.
 */
export function statusChangeAllowedSql<S extends string>(table: StatusTransitions<S>, from: RawBuilder<unknown>, to: RawBuilder<unknown>): RawBuilder<boolean> {
  const branches = table.statuses.map((status) => {
    const targets = table.transitions[status];
    return targets.length === 0 ? sql`when ${sql.lit(status)} then false` : sql`when ${sql.lit(status)} then ${to} in (${statusListSql(targets)})`;
  });
  return sql<boolean>`(${from} = ${to} or case ${from} ${sql.join(branches, sql` `)} else false end)`;
}
