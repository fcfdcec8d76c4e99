import type { Database } from '../../platform/db/connection.ts';
import type { PayoutFunding } from '../../platform/db/tables.ts';
import { exactMinorUnits } from '../../platform/money/major-units.ts';
import { eachPayDate, notePayDateStage, type PayDateFailure } from '../../platform/pay-date-exceptions/pay-date-exceptions.ts';
import { fundableEntries } from './funding-order.ts';
import { fundCoveredPayDates, fundTrustedEntries, listUnfundedEntries, markFunded } from './funding-repository.ts';
import { advisoryLockCash } from './remittance-repository.ts';

/** Pay dates whose entries are read and funded by one statement each: a few tens of thousands of rows. */
const PAY_DATES_PER_STATEMENT = 500;

export interface FundingOutcome {
  /** Entries funded because their employer is trusted (or their payroll a sandbox's). */
  trusted: number;
  /** Entries funded by cash received. */
  byCash: number;
  /** Payroll pay dates whose entries wait, wholly or partly, for cash. */
  waiting: number;
  /** Payroll pay dates that could not be funded (recorded as exceptions): the others were. */
  failed: number;
}

/**
 * Makes settled ledger entries payable before a payout run. Trusted employers' entries are funded as
 * they are. Every other payroll pay date's entries are funded from its remittance's received cash, in
 * the documented order (funding-order.ts: a payment request's entries together, those netting negative first, then the oldest requests first), as far as
 * the cash not yet used goes; the rest wait for the next statement. A pay date whose amounts cannot be
 * carried is left unfunded and recorded as an exception; the others are funded. One transaction under
 * the cash advisory lock, so no unmatch can take the cash back halfway.
 */
export async function fundLedgerEntries(db: Database, options: { cutoff: string; defaultFunding: PayoutFunding }): Promise<FundingOutcome> {
  return db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    const trusted = await fundTrustedEntries(trx, options.cutoff, options.defaultFunding);
    // Most pay dates have received all they owe: funded whole in one statement, never listed. Only
    // those short of cash have their entries read and ordered.
    const { entriesFunded, short: awaiting } = await fundCoveredPayDates(trx, options.cutoff, options.defaultFunding);
    let byCash = entriesFunded;
    let waiting = 0;
    const failures: PayDateFailure[] = [];
    for (let start = 0; start < awaiting.length; start += PAY_DATES_PER_STATEMENT) {
      const payDates = awaiting.slice(start, start + PAY_DATES_PER_STATEMENT);
      const entriesOf = new Map<string, Awaited<ReturnType<typeof listUnfundedEntries>>>();
      for (const entry of await listUnfundedEntries(trx, payDates, options.cutoff)) {
        const key = `${entry.payroll_id} ${entry.pay_date}`;
        const entries = entriesOf.get(key);
        if (entries) entries.push(entry);
        else entriesOf.set(key, [entry]);
      }
      const outcome = eachPayDate(
        payDates.map((payDate) => ({ ...payDate, payrollId: payDate.payroll_id, payDate: payDate.pay_date })),
        (payDate) => {
          const entries = entriesOf.get(`${payDate.payroll_id} ${payDate.pay_date}`) ?? [];
          const unused = exactMinorUnits(payDate.received - payDate.funded, `The unused cash of payroll ${payDate.payroll_id} pay date ${payDate.pay_date}`);
          const fundable = fundableEntries(
            entries.map((entry) => ({ id: entry.id, paymentRequestId: entry.payment_request_id, amount: entry.amount, requestOrder: entry.request_order })),
            unused,
          );
          return { fundable, waits: fundable.length < entries.length };
        },
      );
      failures.push(...outcome.failures);
      const funded = outcome.results.flatMap((result) => result.fundable);
      waiting += outcome.results.filter((result) => result.waits).length;
      await markFunded(trx, funded);
      byCash += funded.length;
    }
    // Only the short pay dates were judged one by one: those are the ones a failure is resolved for.
    await notePayDateStage(
      trx,
      'funding',
      awaiting.map((p) => ({ payrollId: p.payroll_id, payDate: p.pay_date })),
      failures,
    );
    return { trusted, byCash, waiting, failed: failures.length };
  });
}
