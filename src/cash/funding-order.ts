// Billers are paid only from money an employer has actually remitted. When a pay date's remittance
// covers only part of what its ledger entries add up to, this decides which entries it funds.

export interface FundingCandidate {
  id: string;
  /**
   * The payment request the entry belongs to: a payment's entries of one pay date are funded together
   * or not at all, so a reversal is never paid without the collection it reverses.
   */
  paymentRequestId: string;
  /** Minor units, signed: a reversal is negative. */
  amount: number;
  /** When the payment request was made: the oldest requests are funded first. */
  createdAt: Date;
}

interface FundingUnit {
  paymentRequestId: string;
  net: number;
  createdAt: number;
  entries: FundingCandidate[];
}

const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byCreation = (a: FundingCandidate, b: FundingCandidate): number => a.createdAt.getTime() - b.createdAt.getTime() || compareIds(a.id, b.id);

/**
 * The ids of the entries `available` minor units fund. Entries are funded a payment request at a time
 * (all of its entries, netted): a unit that nets zero or less costs no cash (it only lowers what is
 * paid out), so it is never held back and goes first; the rest follow oldest request first (then its id), stopping at the first
 * that would take the running total above `available`. A later, smaller request does not jump the
 * queue: requests are paid in order. `available` is what was received for the payroll pay date less
 * what is already funded for it.
 */
export function fundableEntries(entries: readonly FundingCandidate[], available: number): string[] {
  if (!Number.isSafeInteger(available)) throw new RangeError(`the available amount must be an integer of minor units, got ${String(available)}`);
  const ids = new Set<string>();
  const units = new Map<string, FundingUnit>();
  for (const entry of entries) {
    if (ids.has(entry.id)) throw new RangeError(`entry ${entry.id} is given twice`);
    ids.add(entry.id);
    if (!Number.isSafeInteger(entry.amount)) throw new RangeError(`entry ${entry.id}'s amount must be an integer of minor units, got ${String(entry.amount)}`);
    if (Number.isNaN(entry.createdAt.getTime())) throw new RangeError(`entry ${entry.id} has an invalid creation time`);
    const unit = units.get(entry.paymentRequestId) ?? { paymentRequestId: entry.paymentRequestId, net: 0, createdAt: entry.createdAt.getTime(), entries: [] };
    unit.net += entry.amount;
    unit.createdAt = Math.min(unit.createdAt, entry.createdAt.getTime());
    unit.entries.push(entry);
    units.set(entry.paymentRequestId, unit);
  }
  const byAge = (a: FundingUnit, b: FundingUnit) => a.createdAt - b.createdAt || compareIds(a.paymentRequestId, b.paymentRequestId);
  const lowering = [...units.values()].filter((unit) => unit.net <= 0).sort(byAge);
  const raising = [...units.values()].filter((unit) => unit.net > 0).sort(byAge);
  const funded = [...lowering];
  let runningTotal = lowering.reduce((sum, unit) => sum + unit.net, 0);
  for (const unit of raising) {
    if (runningTotal + unit.net > available) break;
    runningTotal += unit.net;
    funded.push(unit);
  }
  return funded.flatMap((unit) => unit.entries.sort(byCreation).map((entry) => entry.id));
}
