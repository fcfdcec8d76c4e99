import type { Database } from '../db/connection.ts';
import type { PayoutFunding } from '../db/tables.ts';
import { fundableEntries } from './funding-order.ts';
import { fundCoveredPayDates, fundTrustedEntries, listUnfundedEntries, markFunded } from './funding-repository.ts';
import { lockCash } from './remittance-repository.ts';

/** Pay dates whose entries are read and funded by one statement each: a few tens of thousands of rows. */
const PAY_DATES_PER_STATEMENT = 500;

export interface FundingOutcome {
  /** Entries funded because their employer is trusted (or their payroll a sandbox's). */
  trusted: number;
  /** Entries funded by cash received. */
  byCash: number;
  /** Payroll pay dates whose entries wait, wholly or partly, for cash. */
  waiting: number;
}

/**
 * Makes settled ledger entries payable before a payout run. Trusted employers' entries are funded as
 * they are. Every other payroll pay date's entries are funded from its remittance's received cash, in
 * the documented order (funding-order.ts: a payment request's entries together, those netting negative first, then the oldest requests first), as far as
 * the cash not yet used goes; the rest wait for the next statement. One transaction under the cash
 * lock, so no unmatch can take the cash back halfway.
 */
export async function fundLedgerEntries(db: Database, options: { cutoff: string; defaultFunding: PayoutFunding }): Promise<FundingOutcome> {
  return db.transaction().execute(async (trx) => {
    await lockCash(trx, 'exclusive');
    const trusted = await fundTrustedEntries(trx, options.cutoff, options.defaultFunding);
    // Most pay dates have received all they owe: funded whole in one statement, never listed. Only
    // those short of cash have their entries read and ordered.
    const { entriesFunded, short: awaiting } = await fundCoveredPayDates(trx, options.cutoff, options.defaultFunding);
    let byCash = entriesFunded;
    let waiting = 0;
    for (let start = 0; start < awaiting.length; start += PAY_DATES_PER_STATEMENT) {
      const payDates = awaiting.slice(start, start + PAY_DATES_PER_STATEMENT);
      const entriesOf = new Map<string, Awaited<ReturnType<typeof listUnfundedEntries>>>();
      for (const entry of await listUnfundedEntries(trx, payDates, options.cutoff)) {
        const key = `${entry.payroll_id} ${entry.pay_date}`;
        const entries = entriesOf.get(key);
        if (entries) entries.push(entry);
        else entriesOf.set(key, [entry]);
      }
      const funded: string[] = [];
      for (const payDate of payDates) {
        const entries = entriesOf.get(`${payDate.payroll_id} ${payDate.pay_date}`) ?? [];
        const fundable = fundableEntries(
          entries.map((entry) => ({ id: entry.id, paymentRequestId: entry.payment_request_id, amount: entry.amount, requestOrder: entry.request_order })),
          payDate.received - payDate.funded,
        );
        funded.push(...fundable);
        if (fundable.length < entries.length) waiting += 1;
      }
      await markFunded(trx, funded);
      byCash += funded.length;
    }
    return { trusted, byCash, waiting };
  });
}
