import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import type { Database } from '../../../src/platform/db/connection.ts';
import { lockPayDate } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { reconcilePayDate, type ReconcileOptions } from '../../../src/cycle/reconciliation/reconciliation-service.ts';
import { createBiller, createEmployee, createEmployer, createMandateRow, createPayroll, createPayrollProvider, createProviderClient } from '../../support/factories.ts';

// Shared by the reconciliation tests: a payroll with four monthly pay dates and a fixed "today"
// before all their lock dates, so which pay date a shortfall is carried to never depends on the
// day the tests run.

export const TODAY = '2026-10-01';
export const PD1 = '2026-10-30';
export const PD2 = '2026-11-27';
export const PD3 = '2026-12-24';
export const PD4 = '2027-01-29';

export const calendar = [
  { pay_date: PD1, payroll_cutoff_date: '2026-10-23', pay_period: '7-2026', lock_date: '2026-10-21' },
  { pay_date: PD2, payroll_cutoff_date: '2026-11-20', pay_period: '8-2026', lock_date: '2026-11-18' },
  { pay_date: PD3, payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' },
  { pay_date: PD4, payroll_cutoff_date: '2027-01-22', pay_period: '10-2026', lock_date: '2027-01-20' },
];

export interface PaymentOptions {
  due?: string | null;
  allowPostDue?: boolean;
  target?: string;
  schedule?: { id: string; instalment: number };
}

export async function createWorld(db: Database, options: { employees?: number; payDates?: typeof calendar } = {}) {
  const payDates = options.payDates ?? calendar;
  const provider = await createPayrollProvider(db);
  const employer = await createEmployer(db, provider.id);
  const payroll = await createPayroll(db, { providerId: provider.id, employerId: employer.id, payDates });
  const providerClient = await createProviderClient(db, provider.id);
  const biller = await createBiller(db);
  const people: Array<{
    employee: Awaited<ReturnType<typeof createEmployee>>['employee'];
    mandate: Awaited<ReturnType<typeof createMandateRow>>;
  }> = [];
  for (let i = 0; i < (options.employees ?? 1); i++) {
    const { employee } = await createEmployee(db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
    const mandate = await createMandateRow(db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
    people.push({ employee, mandate });
  }
  const periodOf = (payDate: string) => payDates.find((d) => d.pay_date === payDate)!.pay_period;

  async function payment(personIndex: number, amount: number, opts: PaymentOptions = {}) {
    const person = people[personIndex]!;
    return db
      .insertInto('payment_requests')
      .values({
        biller_client_id: biller.clientId,
        mandate_id: person.mandate.id,
        payroll_id: payroll.id,
        employee_id: person.employee.id,
        currency: 'GBP',
        amount,
        due_date: opts.due === undefined ? '2026-11-05' : opts.due,
        allow_post_due_date_deduction: opts.allowPostDue ?? false,
        target_pay_date: opts.target ?? payDates[0]!.pay_date,
        schedule_id: opts.schedule?.id ?? null,
        instalment_number: opts.schedule?.instalment ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** A pushed record inserted directly, as the push endpoint stores it; version defaults to the next one. */
  async function push(employeeId: string, payDate: string, amount: number, version?: number) {
    const latest = await db
      .selectFrom('deduction_records')
      .select((eb) => eb.fn.max('version').as('v'))
      .where('payroll_id', '=', payroll.id)
      .where('pay_date', '=', payDate)
      .where('employee_id', '=', employeeId)
      .executeTakeFirst();
    const nextVersion = version ?? (latest?.v === null || latest?.v === undefined ? 1 : Number(latest.v) + 1);
    return db
      .insertInto('deduction_records')
      .values({
        payroll_id: payroll.id,
        pay_period: periodOf(payDate),
        pay_date: payDate,
        employee_id: employeeId,
        record_id: crypto.randomUUID(),
        version: nextVersion,
        deduction_amount: amount,
        currency: 'GBP',
        requested_payments: JSON.stringify([]),
        content_hash: `${employeeId}:${nextVersion}:${amount}`,
        source: 'push',
        received_by_client_id: providerClient.clientId,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  const lock = (payDate: string) => lockPayDate(db, payroll.id, payDate);
  const reconcile = (payDate: string, opts: ReconcileOptions = {}) => reconcilePayDate(db, payroll.id, payDate, { today: TODAY, ...opts });

  return { provider, employer, payroll, biller, people, providerClient, payment, push, lock, reconcile };
}

export type World = Awaited<ReturnType<typeof createWorld>>;

export async function paymentRow(db: Database, id: string) {
  return db.selectFrom('payment_requests').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

export async function ledgerOf(db: Database, paymentId: string) {
  return db.selectFrom('ledger_entries').selectAll().where('payment_request_id', '=', paymentId).orderBy('created_at').orderBy('revision').orderBy('kind', 'desc').execute();
}

export async function attemptsOf(db: Database, paymentId: string) {
  return db.selectFrom('collection_attempts').selectAll().where('payment_request_id', '=', paymentId).orderBy('attempt_number').execute();
}

export async function paymentEvents(db: Database, paymentId: string) {
  const rows = await db
    .selectFrom('events')
    .select(eventSelection)
    .where('resource_id', '=', paymentId)
    .where('type', '=', 'payment_request.updated')
    .orderBy('sequence')
    .execute();
  return rows.map((row) => (row.payload as { data: { status: string; version: number; collected_amount: number } }).data);
}

export const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
