import { sql, type RawBuilder } from 'kysely';

/**
 * timeOrderedUuid as an SQL expression, for ids made where the rows are made (a statement inserting
 * events or payout items from rows it has just written): the 16 bytes of a version 4 UUID (`random`, a
 * bytea expression, evaluated per row) under the 48-bit millisecond clock, with the version 7 nibble.
 */
export function timeOrderedUuidSql(random: RawBuilder<unknown>): RawBuilder<string> {
  return sql<string>`encode(set_byte(
    overlay(${random} placing substring(int8send((extract(epoch from clock_timestamp()) * 1000)::int8) from 3) from 1 for 6),
    6, (get_byte(${random}, 6) & 15) | 112), 'hex')::uuid`;
}
