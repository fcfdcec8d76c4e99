import { sql } from 'kysely';

/**
 * timeOrderedUuid as an SQL expression, for ids made where the rows are made (a statement inserting
 * events or payout items from rows it has just written), evaluated per row: the 48-bit millisecond
 * clock, the version 7 nibble, 12 random bits, the RFC variant and 62 random bits (74 in all, as in
 * timeOrderedUuid). The random bits come from random(), PostgreSQL's own generator, seeded per session
 * from the strong source: gen_random_uuid() asks OpenSSL for every id, and at two million ids a payout
 * run that cost more than a second of the database's time. The ids need to be unique and ordered, not
 * secret (nothing is authorised by knowing one), and the primary key refuses a repeat.
 */
export const timeOrderedUuidSql = sql<string>`encode(
  int8send(((extract(epoch from clock_timestamp()) * 1000)::int8 << 16) | 28672 | floor(random() * 4096)::int8)
  || int8send((floor(random() * 2147483648)::int8 << 31) | floor(random() * 2147483648)::int8 | (-9223372036854775808)::int8),
  'hex')::uuid`;
