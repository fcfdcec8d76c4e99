import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MANDATE_LIFECYCLE } from '../../../src/collections/mandates/mandate-transitions.ts';
import { PAYMENT_REQUEST_LIFECYCLE } from '../../../src/collections/payments/payment-transitions.ts';
import { PAYOUT_LIFECYCLE } from '../../../src/settlement/payouts/payout-transitions.ts';
import { SCHEDULE_LIFECYCLE } from '../../../src/collections/schedules/schedule-transitions.ts';
import { fromStatusesSql, statusChangeAllowedSql, statusListSql } from '../../../src/platform/db/status-transitions-sql.ts';
import type { StatusTransitions } from '../../../src/platform/shared/status-transitions.ts';
import { SNAPSHOT_LIFECYCLE } from '../../../src/cycle/snapshots/snapshot-transitions.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

// The SQL the bulk statements guard their status moves with must say what the tables say, pair by pair.

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(1);
});
afterAll(async () => database?.drop());

const LIFECYCLES = [PAYMENT_REQUEST_LIFECYCLE, MANDATE_LIFECYCLE, SCHEDULE_LIFECYCLE, PAYOUT_LIFECYCLE, SNAPSHOT_LIFECYCLE] as const;

describe.each(LIFECYCLES.map((lifecycle) => [lifecycle.resource, lifecycle as StatusTransitions<string>] as const))('%s lifecycle in SQL', (_resource, lifecycle) => {
  it('statusChangeAllowedSql allows exactly the table’s moves and keeping a status, for every pair', async () => {
    const statuses = [...lifecycle.statuses, 'unknown'];
    const pairs = statuses.flatMap((from) => statuses.map((to) => ({ from, to })));
    const { rows } = await sql<{ from: string; to: string; allowed: boolean | null }>`
        select p.from, p.to, ${statusChangeAllowedSql(lifecycle, sql`p.from`, sql`p.to`)} as allowed
        from unnest(${pairs.map((pair) => pair.from)}::text[], ${pairs.map((pair) => pair.to)}::text[]) as p("from", "to")
      `.execute(database.db);
    expect(rows).toHaveLength(pairs.length);
    for (const row of rows) {
      const expected = row.from === row.to || lifecycle.can(row.from, row.to);
      expect(row.allowed, `${row.from} -> ${row.to}`).toBe(expected);
    }
  });

  it('statusChangeAllowedSql never allows a move to or from no status', async () => {
    const { rows } = await sql<{ to_null: boolean | null; from_null: boolean | null }>`
        select ${statusChangeAllowedSql(lifecycle, sql.lit(lifecycle.statuses[0]!), sql`null::text`)} as to_null,
               ${statusChangeAllowedSql(lifecycle, sql`null::text`, sql.lit(lifecycle.statuses[0]!))} as from_null
      `.execute(database.db);
    expect(rows[0]!.to_null).not.toBe(true);
    expect(rows[0]!.from_null).not.toBe(true);
  });

  it('fromStatusesSql lists exactly fromStatuses of every reachable status', async () => {
    for (const to of lifecycle.statuses) {
      const sources = lifecycle.statuses.filter((from) => lifecycle.can(from, to));
      if (sources.length === 0) {
        expect(() => fromStatusesSql(lifecycle, to)).toThrow();
        continue;
      }
      const { rows } = await sql<{ status: string }>`
          select s.status from unnest(${[...lifecycle.statuses, 'unknown']}::text[]) as s(status)
          where s.status in (${fromStatusesSql(lifecycle, to)})
        `.execute(database.db);
      expect(
        rows.map((row) => row.status),
        `to ${to}`,
      ).toEqual(sources);
    }
  });
});

describe('statusListSql', () => {
  it('writes literals, quoted safely', async () => {
    const { rows } = await sql<{ statuses: string[] }>`select array[${statusListSql(["it's", 'plain'])}]::text[] as statuses`.execute(database.db);
    expect(rows[0]!.statuses).toEqual(["it's", 'plain']);
    const compiled = sql`status in (${statusListSql(['pending'])})`.compile(database.db);
    expect(compiled.sql).toBe(`status in ('pending')`);
    expect(compiled.parameters).toEqual([]);
  });

  it('refuses an empty list, which is not SQL', () => {
    expect(() => statusListSql([])).toThrow('an empty status list is not SQL');
  });
});
