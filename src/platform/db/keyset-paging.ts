import { sql, type SelectQueryBuilder } from 'kysely';
import { MalformedRequestError } from '../shared/domain-errors.ts';
import { decodeCursor, type Cursor, type PagingQuery } from '../shared/paging.ts';

/**
 * Newest first, keyset on (created_at, id): stable under inserts, no OFFSET scans. `after` walks to
 * older rows, `before` to newer ones. Fetches one extra row to know whether another page exists.
 */
export function applyPaging<DB, TB extends keyof DB & string, O>(query: SelectQueryBuilder<DB, TB, O>, table: TB, paging: PagingQuery): SelectQueryBuilder<DB, TB, O> {
  if (paging.after && paging.before) {
    throw new MalformedRequestError('invalid-paging', 'Use either after or before, not both');
  }
  const createdAt = sql.ref(`${table}.created_at`);
  const id = sql.ref(`${table}.id`);
  // JavaScript dates stop at milliseconds but Postgres keeps microseconds: compare with the cursor
  // row's stored instant, and fall back to the cursor's own only if that row has gone.
  const cursorInstant = (c: Cursor) => sql`coalesce((select created_at from ${sql.table(table)} where id = ${c.id}::uuid), ${c.createdAt}::timestamptz)`;
  let q = query as SelectQueryBuilder<any, any, any>;
  if (paging.after) {
    const c = decodeCursor(paging.after, 'after');
    q = q.where(sql<boolean>`(${createdAt}, ${id}) < (${cursorInstant(c)}, ${c.id}::uuid)`);
  }
  if (paging.before) {
    const c = decodeCursor(paging.before, 'before');
    q = q.where(sql<boolean>`(${createdAt}, ${id}) > (${cursorInstant(c)}, ${c.id}::uuid)`);
  }
  const direction = paging.before ? 'asc' : 'desc';
  return q
    .orderBy(createdAt, direction)
    .orderBy(id, direction)
    .limit(paging.limit + 1) as SelectQueryBuilder<DB, TB, O>;
}
