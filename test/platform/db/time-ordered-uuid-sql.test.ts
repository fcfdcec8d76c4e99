import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timeOrderedUuidSql } from '../../../src/platform/db/time-ordered-uuid-sql.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';

// Ids made in SQL (events and payout items written by bulk statements) must look like those made in
// TypeScript (timeOrderedUuid): version 7, the RFC variant, the clock in front, and never repeat.

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase(1);
});
afterAll(async () => database?.drop());

const VERSION_7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondsOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('timeOrderedUuidSql', () => {
  it('makes distinct version 7 ids with the clock in front, row by row, 200,000 in one statement', async () => {
    const before = Date.now();
    const { rows } = await sql<{ id: string }>`select ${timeOrderedUuidSql}::text as id from generate_series(1, 200000)`.execute(database.db);
    const after = Date.now();
    expect(rows).toHaveLength(200_000);
    expect(new Set(rows.map((row) => row.id)).size).toBe(200_000);
    for (const { id } of rows) {
      expect(id).toMatch(VERSION_7);
      expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before - 1_000);
      expect(millisecondsOf(id)).toBeLessThanOrEqual(after + 1_000);
    }
    // The clock is read per row: a later row never carries an earlier millisecond.
    const clocks = rows.map((row) => millisecondsOf(row.id));
    expect(clocks.every((clock, index) => index === 0 || clock >= clocks[index - 1]!)).toBe(true);
  });

  it('uses every random bit: each of the 74 varies across ids', async () => {
    const { rows } = await sql<{ id: string }>`select ${timeOrderedUuidSql}::text as id from generate_series(1, 2000)`.execute(database.db);
    const bits = rows.map((row) => BigInt(`0x${row.id.replaceAll('-', '')}`));
    // Bits 0-61 (below the variant) and 64-75 (below the version nibble) are random.
    const randomBits = [...Array.from({ length: 62 }, (_, bit) => bit), ...Array.from({ length: 12 }, (_, bit) => 64 + bit)];
    for (const bit of randomBits) {
      const ones = bits.filter((value) => (value >> BigInt(bit)) & 1n).length;
      expect(ones, `bit ${bit}`).toBeGreaterThan(800);
      expect(ones, `bit ${bit}`).toBeLessThan(1200);
    }
  });
});
