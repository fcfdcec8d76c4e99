import type { Insertable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { AvailabilityLookupsTable } from '../../platform/db/tables.ts';

export type AvailabilityLookup = Insertable<AvailabilityLookupsTable>;

export async function insertAvailabilityLookup(db: Executor, lookup: AvailabilityLookup): Promise<void> {
  await db.insertInto('availability_lookups').values(lookup).execute();
}
