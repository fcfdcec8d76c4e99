import { sql, type SelectQueryBuilder } from 'kysely';
import { z } from 'zod';
import { HttpProblem } from '../http/problem.ts';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 500;

/** Cursor paging query: `limit`, and at most one of `after` / `before` (opaque cursors). */
export const pagingQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).default(DEFAULT_PAGE_SIZE),
  after: z.string().min(1).optional(),
  before: z.string().min(1).optional(),
});

export type PagingQuery = z.infer<typeof pagingQuerySchema>;

export const pagingResponseSchema = z
  .object({ limit: z.number().int(), after: z.string().nullable(), before: z.string().nullable() })
  .meta({ id: 'PagingResponse' });

export interface Cursor {
  createdAt: string;
  id: string;
}

export function encodeCursor(row: { created_at: Date; id: string }): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');
}

export function decodeCursor(cursor: string, parameter: 'after' | 'before'): Cursor {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof createdAt === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(createdAt))) {
      return { createdAt, id };
    }
  } catch {
    // fall through to the problem below
  }
  throw new HttpProblem(400, 'invalid-cursor', `The ${parameter} cursor is not one this API issued`, {
    errors: [{ pointer: `/query/${parameter}`, detail: 'is not a valid cursor' }],
  });
}

/**
 * Newest first, keyset on (created_at, id): stable under inserts, no OFFSET scans. `after` walks to
 * older rows, `before` to newer ones. Fetches one extra row to know whether another page exists.
 */
export function applyPaging<DB, TB extends keyof DB & string, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  table: TB,
  paging: PagingQuery,
): SelectQueryBuilder<DB, TB, O> {
  if (paging.after && paging.before) {
    throw new HttpProblem(400, 'invalid-paging', 'Use either after or before, not both');
  }
  const createdAt = sql.ref(`${table}.created_at`);
  const id = sql.ref(`${table}.id`);
  // JavaScript dates stop at milliseconds but Postgres keeps microseconds: compare with the cursor
  // row's stored instant, and fall back to the cursor's own only if that row has gone.
  const cursorInstant = (c: Cursor) =>
    sql`coalesce((select created_at from ${sql.table(table)} where id = ${c.id}::uuid), ${c.createdAt}::timestamptz)`;
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
  return q.orderBy(createdAt, direction).orderBy(id, direction).limit(paging.limit + 1) as SelectQueryBuilder<DB, TB, O>;
}

/** Trims the probe row and builds the PagingResponse; rows come back newest first either way. */
export function pageOf<T extends { created_at: Date; id: string }>(rows: T[], paging: PagingQuery) {
  const hasMore = rows.length > paging.limit;
  const page = rows.slice(0, paging.limit);
  if (paging.before) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];
  const olderExists = paging.before ? true : hasMore;
  const newerExists = paging.before ? hasMore : Boolean(paging.after);
  return {
    items: page,
    paging: {
      limit: paging.limit,
      after: olderExists && last ? encodeCursor(last) : null,
      before: newerExists && first ? encodeCursor(first) : null,
    },
  };
}
