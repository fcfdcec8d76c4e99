// Ids the service makes itself for rows and events (payment requests, snapshots, nightly runs, collection
// attempts, ledger entries, payout items, deduction lines, instruction items, deduction records, and every
// event, built in TypeScript or in SQL: src/platform/db/time-ordered-uuid-sql.ts) are UUID
// version 7 (RFC 9562): 48 bits of Unix time in milliseconds, then 74 random bits. (A payout's id is the
// exception: its reference is made of the id's first digits, see payout-service.ts.) Ids made close in
// time sort close together, so each index on them grows at its right edge: a reconciliation inserting a
// hundred rows touches a page or two of the primary key instead of a hundred random leaf pages (each a
// buffer to find, often to read, to dirty and to write to the WAL in full after a checkpoint).

/** A version 7 UUID for `nowMs`: the random bits of a version 4 UUID under a millisecond timestamp. */
export function timeOrderedUuid(nowMs: number = Date.now()): string {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs >= 2 ** 48) throw new RangeError(`timestamp out of range: ${nowMs}`);
  const time = nowMs.toString(16).padStart(12, '0');
  // randomUUID: xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx with the RFC variant already in V.
  const random = crypto.randomUUID();
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}
