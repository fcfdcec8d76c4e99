import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, sessionConnection } from '../../../src/platform/db/connection.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

// Every session the service opens runs in UTC and never compiles statements with JIT: a night's
// remittance refresh compiled for 0.1–0.5 s before it ran, and reconciliation paid a round trip per
// pay date to turn it off.

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(2);
});
afterAll(async () => database?.drop());

/** The plan (not run) of a statement whose estimated cost (about 120,000) passes the default jit_above_cost (100,000). */
const costly = sql.raw(`explain (format json) select sum(n * 2) from generate_series(1, 6000000) n where n % 7 <> 3`);

function usedJit(plan: unknown): boolean {
  return 'JIT' in (plan as Array<Record<string, unknown>>)[0]!;
}

describe('the sessions of createDatabase', () => {
  it('run in UTC with JIT off', async () => {
    const { rows } = await sql<{ timezone: string; jit: string }>`select current_setting('timezone') as timezone, current_setting('jit') as jit`.execute(database.db);
    expect(rows[0]).toEqual({ timezone: 'UTC', jit: 'off' });
  });

  it('do not compile a statement that passes jit_above_cost, which the server would compile with JIT on', async () => {
    await database.db.transaction().execute(async (trx) => {
      const { rows: without } = await sql<{ 'QUERY PLAN': unknown }>`${costly}`.execute(trx);
      expect(usedJit(without[0]!['QUERY PLAN'])).toBe(false);
      // The control: the same statement in the same session is compiled once JIT is allowed, so the
      // assertion above tests the setting and not a server built without JIT.
      await sql`set local jit = on`.execute(trx);
      const { rows: withJit } = await sql<{ 'QUERY PLAN': unknown }>`${costly}`.execute(trx);
      expect(usedJit(withJit[0]!['QUERY PLAN'])).toBe(true);
    });
  });
});

describe('sessionConnection', () => {
  it("keeps a connection string's own options, after the service's, so UTC and jit=off survive them", async () => {
    const url = new URL(database.url);
    url.searchParams.set('options', '-c statement_timeout=12345 -c application_name=from-the-url');
    const db = createDatabase(url.toString(), 1);
    try {
      const { rows } = await sql<{ timezone: string; jit: string; timeout: string; name: string }>`
        select current_setting('timezone') as timezone, current_setting('jit') as jit,
               current_setting('statement_timeout') as timeout, current_setting('application_name') as name
      `.execute(db);
      expect(rows[0]).toEqual({ timezone: 'UTC', jit: 'off', timeout: '12345ms', name: 'from-the-url' });
    } finally {
      await db.destroy();
    }
  });

  it('leaves a connection string without options as it is', () => {
    const plain = 'postgres://postgres@127.0.0.1:5432/deductions';
    expect(sessionConnection(plain)).toEqual({ connectionString: plain, options: '-c timezone=UTC -c jit=off' });
    expect(sessionConnection(`${plain}?options=-c%20jit%3Don`)).toEqual({ connectionString: plain, options: '-c timezone=UTC -c jit=off -c jit=on' });
  });
});
