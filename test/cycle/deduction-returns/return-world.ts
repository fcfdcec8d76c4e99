import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import type { Database } from '../../../src/platform/db/connection.ts';
import { fromMajorUnits, formatMinorUnits } from '../../../src/platform/money/major-units.ts';
import {
  createBiller,
  createCollectionAccount,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
} from '../../support/factories.ts';

// What the return file tests share: a payroll whose pay date is locked with one payment request per
// employee, and a payroll clerk's pen to fill in its pre-filled return file.

export const PAY_DATE = '2026-11-27';
export const NEXT_PAY_DATE = '2026-12-24';
/** A day in the settlement window, for reconciliations that must decide alike. */
export const RECONCILED_ON = '2026-11-30';

const calendar = [
  { pay_date: PAY_DATE, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: NEXT_PAY_DATE, payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
  { pay_date: '2027-01-28', payroll_cutoff_date: '2027-01-21', pay_period: '10-2026', lock_date: '2027-01-18' },
];

export interface ReturnPerson {
  employeeId: string;
  payrollReference: string;
  paymentId: string;
  amount: number;
}

export interface ReturnWorld {
  providerId: string;
  payrollId: string;
  payrollExternalId: string;
  snapshotId: string;
  people: ReturnPerson[];
}

/** A payroll (of `providerId`, or a new provider) with one payment request per amount, its pay date locked. */
export async function lockedReturnWorld(db: Database, amounts: readonly number[], options: { providerId?: string; lock?: boolean } = {}): Promise<ReturnWorld> {
  await createCollectionAccount(db);
  const providerId = options.providerId ?? (await createPayrollProvider(db)).id;
  const employer = await createEmployer(db, providerId);
  const payroll = await createPayroll(db, { providerId, employerId: employer.id, payDates: calendar });
  const biller = await createBiller(db);
  const people: ReturnPerson[] = [];
  for (const amount of amounts) {
    const { employee, employment } = await createEmployee(db, { providerId, payrollId: payroll.id, employerId: employer.id });
    const mandate = await createMandateRow(db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
    const payment = await createPaymentRequestRow(db, { mandate: { ...mandate, currency: 'GBP' }, amount, targetPayDate: PAY_DATE });
    people.push({ employeeId: employee.id, payrollReference: employment.payroll_reference, paymentId: payment.id, amount });
  }
  const snapshotId = options.lock === false ? '' : (await lockPayDate(db, payroll.id, PAY_DATE)).snapshotId;
  return { providerId, payrollId: payroll.id, payrollExternalId: payroll.external_id, snapshotId, people };
}

/** What the clerk writes for one employee, by payroll reference: the amount deducted in major units, and the leaver flag. */
export type ClerkEntries = Record<string, { deducted?: string; leaver?: string }>;

/**
 * The pre-filled return file as a clerk leaves it: the given items' amount_deducted and leaver
 * changed, and the trailer's total_deducted made the sum again (unless `keepTrailer`).
 */
export function filledIn(content: Buffer | string, entries: ClerkEntries, options: { keepTrailer?: boolean } = {}): Buffer {
  const rows = parse(content, { columns: true }) as Array<Record<string, string>>;
  const columns = Object.keys(rows[0]!);
  let total = 0;
  for (const row of rows) {
    if (row.record_type !== 'item') continue;
    const entry = entries[row.payroll_reference!];
    if (entry?.deducted !== undefined) row.amount_deducted = entry.deducted;
    if (entry?.leaver !== undefined) row.leaver = entry.leaver;
    if (!options.keepTrailer) total += fromMajorUnits(Number(row.amount_deducted), 'GBP');
  }
  const trailer = rows.at(-1)!;
  if (!options.keepTrailer) trailer.total_deducted = formatMinorUnits(total, 'GBP');
  return Buffer.from(stringify(rows, { header: true, columns, record_delimiter: 'windows' }), 'utf8');
}
