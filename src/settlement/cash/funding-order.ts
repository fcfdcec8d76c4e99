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
  /**
   * The payment request's place among the pay date's, oldest first (the database ranks them by
   * creation to the microsecond, then id): the oldest requests are funded first.
   */
  requestOrder: number;
}

interface FundingUnit {
  paymentRequestId: string;
  net: number;
  requestOrder: number;
  entries: FundingCandidate[];
}

const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const byRequestOrder = (a: FundingCandidate, b: FundingCandidate): number => a.requestOrder - b.requestOrder || compareIds(a.id, b.id);

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
    if (!Number.isSafeInteger(entry.requestOrder)) throw new RangeError(`entry ${entry.id}'s request order must be an integer, got ${String(entry.requestOrder)}`);
    const unit = units.get(entry.paymentRequestId) ?? { paymentRequestId: entry.paymentRequestId, net: 0, requestOrder: entry.requestOrder, entries: [] };
    unit.net += entry.amount;
    unit.requestOrder = Math.min(unit.requestOrder, entry.requestOrder);
    unit.entries.push(entry);
    units.set(entry.paymentRequestId, unit);
  }
  const byAge = (a: FundingUnit, b: FundingUnit) => a.requestOrder - b.requestOrder || compareIds(a.paymentRequestId, b.paymentRequestId);
  const lowering = [...units.values()].filter((unit) => unit.net <= 0).sort(byAge);
  const raising = [...units.values()].filter((unit) => unit.net > 0).sort(byAge);
  const funded = [...lowering];
  let runningTotal = lowering.reduce((sum, unit) => sum + unit.net, 0);
  for (const unit of raising) {
    if (runningTotal + unit.net > available) break;
    runningTotal += unit.net;
    funded.push(unit);
  }
  return funded.flatMap((unit) => unit.entries.sort(byRequestOrder).map((entry) => entry.id));
}

/**
 * Whether `available` funds every entry of a payroll pay date, given what each of its payment requests
 * nets (`requestNets`): then fundableEntries would take them all, whatever their order. It does when no
 * request raises the total (nets more than zero), or when all of them together need no more than is
 * available (the running total only climbs through the raising requests, so the last one is the
 * highest it gets). The usual case, a remittance received in full, so the funding run funds such pay
 * dates in one statement (fundCoveredPayDates, funding-repository.ts, tests this in SQL) and orders
 * the entries of the others only.
 */
export function fundsEveryEntry(requestNets: readonly number[], available: number): boolean {
  if (!requestNets.some((net) => net > 0)) return true;
  return requestNets.reduce((sum, net) => sum + net, 0) <= available;
}
