import { sql } from 'kysely';
import type { Database } from '../../../src/platform/db/connection.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { createPayrollProvider } from '../../support/factories.ts';

export interface DuePayrolls {
  payrollIds: string[];
  payments: number;
}

/** Today's date in the service time zone (the default, Europe/London). */
export const todayInServiceZone = () => serviceToday(new Date(), 'Europe/London');

/**
 * `payrolls` payrolls, each with one pay date whose lock date is `lockDate` and `employeesPerPayroll`
 * employees with an active mandate of the biller and one pending payment request of 10.00 due on
 * it: written set-based, so a test gets a run long enough to interrupt in a second or two.
 */
export async function createDuePayrolls(
  db: Database,
  options: { billerClientId: string; payrolls: number; employeesPerPayroll: number; lockDate: string; payDate: string },
): Promise<DuePayrolls> {
  const provider = await createPayrollProvider(db);
  const tag = crypto.randomUUID().slice(0, 8);
  const payrolls = await sql<{ payroll_id: string; employer_id: string }>`
    with g as (
      select n, gen_random_uuid() as employer_id, gen_random_uuid() as payroll_id from generate_series(1, ${options.payrolls}) n
    ),
    employers as (
      insert into employers (id, payroll_provider_id, external_id, name, salary_deduction_opt_in_status)
      select employer_id, ${provider.id}::uuid, ${tag} || '-' || n, 'Employer ' || n, 'opted_in' from g
    ),
    payrolls as (
      insert into payrolls (id, employer_id, payroll_provider_id, external_id, name, payment_run_frequency, currency, go_live_date)
      select payroll_id, employer_id, ${provider.id}::uuid, ${tag} || '-' || n, 'Payroll ' || n, 'monthly', 'GBP', ${options.payDate}::date from g
    ),
    pay_dates as (
      insert into pay_dates (payroll_id, pay_date, payroll_cutoff_date, pay_period, lock_date)
      select payroll_id, ${options.payDate}::date, ${options.payDate}::date, '11-2026', ${options.lockDate}::date from g
    )
    select payroll_id, employer_id from g order by n
  `.execute(db);
  const payrollIds = payrolls.rows.map((row) => row.payroll_id);
  const employerIds = payrolls.rows.map((row) => row.employer_id);
  await sql`
    with people as (
      select p.payroll_id, p.employer_id, n, gen_random_uuid() as employee_id, gen_random_uuid() as consumer_id, gen_random_uuid() as mandate_id
      from unnest(${payrollIds}::uuid[], ${employerIds}::uuid[]) as p (payroll_id, employer_id)
      cross join generate_series(1, ${options.employeesPerPayroll}) n
    ),
    employees as (
      insert into employees (id, payroll_provider_id, given_name, family_name)
      select employee_id, ${provider.id}::uuid, 'Given', 'Family ' || n from people
    ),
    employments as (
      insert into employments (employee_id, employer_id, payroll_id, payroll_reference)
      select employee_id, employer_id, payroll_id, 'WN' || n from people
    ),
    consumers as (
      insert into consumers (id, biller_client_id, given_name, family_name)
      select consumer_id, ${options.billerClientId}::uuid, 'Given', 'Family ' || n from people
    ),
    mandates as (
      insert into mandates (id, biller_client_id, consumer_id, employee_id, payroll_id, status, authorisation_source)
      select mandate_id, ${options.billerClientId}::uuid, consumer_id, employee_id, payroll_id, 'active', '{"type":"online"}' from people
    )
    insert into payment_requests (biller_client_id, mandate_id, payroll_id, employee_id, currency, amount, due_date, target_pay_date)
    select ${options.billerClientId}::uuid, mandate_id, payroll_id, employee_id, 'GBP', 1000, ${options.payDate}::date, ${options.payDate}::date
    from people
  `.execute(db);
  return { payrollIds, payments: payrollIds.length * options.employeesPerPayroll };
}

/** Deletes this test's queue keys, and only those: the shared Redis serves other test files. */
export async function deleteQueueKeys(redis: { scan(...args: any[]): Promise<[string, string[]]>; del(...keys: string[]): Promise<number> }, prefix: string) {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

/** Per pay date of the given payrolls: how many snapshots it has (exactly one each, when right). */
export async function snapshotCounts(db: Database, payrollIds: readonly string[]) {
  const rows = await db
    .selectFrom('deduction_snapshots')
    .select(['payroll_id', 'pay_date'])
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('payroll_id', 'in', payrollIds)
    .groupBy(['payroll_id', 'pay_date'])
    .execute();
  return rows.map((row) => Number(row.count));
}

/** Payment requests of the payrolls by status and attempts, and their payment_request.updated events per request. */
export async function paymentsAndEvents(db: Database, payrollIds: readonly string[]) {
  const payments = await db.selectFrom('payment_requests').select(['id', 'status', 'attempts']).where('payroll_id', 'in', payrollIds).execute();
  const events = await db
    .selectFrom('events')
    .select(['resource_id'])
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('type', '=', 'payment_request.updated')
    .where(
      'resource_id',
      'in',
      payments.map((p) => p.id),
    )
    .groupBy('resource_id')
    .execute();
  return { payments, eventsPerPayment: new Map(events.map((e) => [e.resource_id, Number(e.count)])) };
}
