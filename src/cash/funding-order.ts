// Billers are paid only from money an employer has actually remitted. When a pay date's remittance
// covers only part of what its ledger entries add up to, this decides which entries it funds.

export interface FundingCandidate {
  id: string;
  /** Minor units, signed: a reversal is negative. */
  amount: number;
  createdAt: Date;
}

const byCreation = (a: FundingCandidate, b: FundingCandidate): number =>
  a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The ids of the entries `available` minor units fund, in funding order: every reversal first (a
 * negative entry only lowers what is paid out, so it is never held back), then collections oldest
 * first (created at, then id), stopping at the first that would take the running total above
 * `available`. A later, smaller collection does not jump the queue: entries are paid in order.
 * `available` is what was received for the payroll pay date less what is already funded for it.
 */
export function fundableEntries(entries: readonly FundingCandidate[], available: number): string[] {
  if (!Number.isSafeInteger(available)) throw new RangeError(`the available amount must be an integer of minor units, got ${String(available)}`);
  const ids = new Set<string>();
  for (const entry of entries) {
    if (ids.has(entry.id)) throw new RangeError(`entry ${entry.id} is given twice`);
    ids.add(entry.id);
    if (!Number.isSafeInteger(entry.amount)) throw new RangeError(`entry ${entry.id}'s amount must be an integer of minor units, got ${String(entry.amount)}`);
    if (Number.isNaN(entry.createdAt.getTime())) throw new RangeError(`entry ${entry.id} has an invalid creation time`);
  }
  const reversals = entries.filter((entry) => entry.amount < 0).sort(byCreation);
  const collections = entries.filter((entry) => entry.amount >= 0).sort(byCreation);
  const funded = reversals.map((entry) => entry.id);
  let runningTotal = reversals.reduce((sum, entry) => sum + entry.amount, 0);
  for (const collection of collections) {
    if (runningTotal + collection.amount > available) break;
    runningTotal += collection.amount;
    funded.push(collection.id);
  }
  return funded;
}
