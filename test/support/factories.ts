import type { Insertable } from 'kysely';
import type { Database } from '../../src/platform/db/connection.ts';
import type { CollectionAttemptsTable } from '../../src/platform/db/tables.ts';
import { createClient, type IssuedCredentials } from '../../src/directory/auth/clients-service.ts';
import type { Scope } from '../../src/directory/auth/scopes.ts';

let counter = 0;
const next = () => ++counter;

export async function createPayrollProvider(db: Database, overrides: { name?: string; leadTimeWorkingDays?: number } = {}) {
  return db
    .insertInto('payroll_providers')
    .values({
      name: overrides.name ?? `Provider ${next()}`,
      api_base_url: null,
      api_token_url: null,
      api_client_id: null,
      api_client_secret: null,
      lead_time_working_days: overrides.leadTimeWorkingDays ?? 2,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function createBiller(db: Database, scopes?: Scope[]): Promise<IssuedCredentials> {
  return createClient(db, { name: `Biller ${next()}`, role: 'biller', ...(scopes ? { scopes } : {}) });
}

export async function createOperator(db: Database): Promise<IssuedCredentials> {
  return createClient(db, { name: `Operator ${next()}`, role: 'operator' });
}

export async function createProviderClient(db: Database, payrollProviderId?: string): Promise<IssuedCredentials> {
  const providerId = payrollProviderId ?? (await createPayrollProvider(db)).id;
  return createClient(db, { name: `Provider client ${next()}`, role: 'payroll_provider', payrollProviderId: providerId });
}

export async function createEmployer(db: Database, providerId: string, overrides: { optIn?: 'pending' | 'opted_in' | 'opted_out'; name?: string } = {}) {
  const n = next();
  return db
    .insertInto('employers')
    .values({
      payroll_provider_id: providerId,
      external_id: `EMP-${n}`,
      name: overrides.name ?? `Employer ${n} Ltd`,
      sic_code: '62020',
      industry_name: 'Information technology consultancy',
      salary_deduction_opt_in_status: overrides.optIn ?? 'opted_in',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A payroll with an explicit calendar. Lock dates are given directly so a test states exactly
 * which pay dates are open relative to today.
 */
export async function createPayroll(
  db: Database,
  options: {
    providerId: string;
    employerId: string;
    frequency?: 'weekly' | 'fortnightly' | 'four_weekly' | 'monthly' | 'unknown';
    currency?: string;
    payDates?: Array<{ pay_date: string; payroll_cutoff_date: string; pay_period: string; lock_date: string }>;
    /** Its first pay date to collect; by default live from the start, so every pay date a test gives it is collected. */
    goLiveDate?: string | null;
  },
) {
  const n = next();
  const payroll = await db
    .insertInto('payrolls')
    .values({
      id: crypto.randomUUID(),
      employer_id: options.employerId,
      payroll_provider_id: options.providerId,
      external_id: `PR-${n}`,
      name: `Payroll ${n}`,
      payment_run_frequency: options.frequency ?? 'monthly',
      currency: options.currency ?? 'GBP',
      go_live_date: options.goLiveDate === undefined ? '2000-01-01' : options.goLiveDate,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (options.payDates?.length) {
    await db
      .insertInto('pay_dates')
      .values(options.payDates.map((d) => ({ payroll_id: payroll.id, ...d })))
      .execute();
  }
  return payroll;
}

/** Pay dates relative to today: `monthsAhead` monthly pay dates, each locking 10 days before. */
export function futureMonthlyPayDates(count = 4, from = new Date()) {
  const dates = [];
  for (let i = 1; i <= count; i++) {
    const pay = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + i, 25));
    const iso = (d: Date) => d.toISOString().slice(0, 10);
    dates.push({
      pay_date: iso(pay),
      payroll_cutoff_date: iso(new Date(pay.getTime() - 7 * 86_400_000)),
      lock_date: iso(new Date(pay.getTime() - 10 * 86_400_000)),
      pay_period: `${pay.getUTCMonth() + 1}-${pay.getUTCFullYear()}`,
    });
  }
  return dates;
}

export async function createEmployee(db: Database, options: { providerId: string; payrollId: string; employerId: string; status?: 'active' | 'leaver' | 'unknown' }) {
  const n = next();
  const employee = await db
    .insertInto('employees')
    .values({
      payroll_provider_id: options.providerId,
      national_registration_number: `QQ${String(100000 + n).padStart(6, '0')}C`,
      date_of_birth: '1988-03-14',
      given_name: 'Alex',
      family_name: `Taylor${n}`,
      email_address: `alex.taylor${n}@example.com`,
      phone_number: '+447700900123',
      postal_code: 'SW1A 1AA',
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const employment = await db
    .insertInto('employments')
    .values({
      employee_id: employee.id,
      employer_id: options.employerId,
      payroll_id: options.payrollId,
      payroll_reference: `WN${n}`,
      start_date: '2020-01-06',
      employment_status: options.status ?? 'active',
      contract_type: 'full_time',
      annualised_salary: 3_600_000,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { employee, employment };
}

/** Provider, opted-in employer, monthly payroll with four future pay dates, and one employee. */
export async function createEmploymentWorld(db: Database, options: { frequency?: 'monthly' | 'weekly' | 'four_weekly' } = {}) {
  const provider = await createPayrollProvider(db);
  const employer = await createEmployer(db, provider.id);
  const payroll = await createPayroll(db, {
    providerId: provider.id,
    employerId: employer.id,
    frequency: options.frequency ?? 'monthly',
    payDates: futureMonthlyPayDates(),
  });
  const { employee, employment } = await createEmployee(db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  return { provider, employer, payroll, employee, employment };
}

/** A mandate inserted directly (fixture), for tests of payments and schedules. */
export async function createMandateRow(
  db: Database,
  options: {
    billerClientId: string;
    employeeId: string;
    payrollId: string;
    status?: 'pending_enablement' | 'active' | 'suspended' | 'revoked' | 'cancelled' | 'expired' | 'failed';
    maxAmountPerPayDate?: number | null;
    /** The lifetime cap (limitations.max_total_amount). */
    maxTotalAmount?: number | null;
    /** 'YYYY-MM-DD', inclusive; null (the default): no bound. */
    validFrom?: string | null;
    validTo?: string | null;
  },
) {
  const consumer = await db
    .insertInto('consumers')
    .values({ biller_client_id: options.billerClientId, given_name: 'Alex', family_name: 'Taylor' })
    .returningAll()
    .executeTakeFirstOrThrow();
  return db
    .insertInto('mandates')
    .values({
      biller_client_id: options.billerClientId,
      consumer_id: consumer.id,
      employee_id: options.employeeId,
      payroll_id: options.payrollId,
      status: options.status ?? 'active',
      max_amount_per_pay_date: options.maxAmountPerPayDate ?? null,
      max_total_amount: options.maxTotalAmount ?? null,
      valid_from: options.validFrom ?? null,
      valid_to: options.validTo ?? null,
      authorisation_source: JSON.stringify({ type: 'online', reference: 'test' }),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A schedule inserted directly (fixture), on a mandate; its instalments are createPaymentRequestRow with `schedule`. */
export async function createScheduleRow(
  db: Database,
  options: {
    mandate: { id: string; biller_client_id: string; currency: string };
    status?: 'active' | 'completed' | 'cancelled' | 'errored';
    totalAmount?: number;
    instalmentCount?: number;
  },
) {
  return db
    .insertInto('schedules')
    .values({
      biller_client_id: options.mandate.biller_client_id,
      mandate_id: options.mandate.id,
      currency: options.mandate.currency,
      status: options.status ?? 'active',
      total_amount: options.totalAmount ?? 10_000,
      instalment_count: options.instalmentCount ?? 1,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function createCollectionAccount(db: Database, currency = 'GBP') {
  return db
    .insertInto('collection_accounts')
    .values({ currency, account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Salary Deductions Collections Ltd' })
    .onConflict((oc) => oc.column('currency').where('active', '=', true).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * A payment request inserted directly (fixture), on a mandate's payroll and employee. The target pay
 * date defaults to the payroll's earliest pay date.
 */
export async function createPaymentRequestRow(
  db: Database,
  options: {
    mandate: { id: string; biller_client_id: string; payroll_id: string; employee_id: string; currency: string };
    status?: 'pending' | 'instructed' | 'collected' | 'paid_out' | 'cancelled' | 'failed' | 'partially_collected';
    amount?: number;
    targetPayDate?: string;
    /** What earlier attempts collected (default 0). */
    collectedAmount?: number;
    /** 'YYYY-MM-DD' or null (the default). */
    dueDate?: string | null;
    /** Default now(); a test of ordering states it. */
    createdAt?: Date;
    /** An instalment of this schedule. */
    schedule?: { id: string; instalmentNumber: number };
  },
) {
  const targetPayDate =
    options.targetPayDate ??
    (await db.selectFrom('pay_dates').select('pay_date').where('payroll_id', '=', options.mandate.payroll_id).orderBy('pay_date').executeTakeFirstOrThrow()).pay_date;
  return db
    .insertInto('payment_requests')
    .values({
      biller_client_id: options.mandate.biller_client_id,
      mandate_id: options.mandate.id,
      payroll_id: options.mandate.payroll_id,
      employee_id: options.mandate.employee_id,
      status: options.status ?? 'pending',
      currency: options.mandate.currency,
      amount: options.amount ?? 5000,
      target_pay_date: targetPayDate,
      ...(options.collectedAmount !== undefined ? { collected_amount: options.collectedAmount } : {}),
      ...(options.dueDate !== undefined ? { due_date: options.dueDate } : {}),
      ...(options.createdAt !== undefined ? { created_at: options.createdAt } : {}),
      ...(options.schedule ? { schedule_id: options.schedule.id, instalment_number: options.schedule.instalmentNumber } : {}),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

type PaymentIdentity = 'payment_request_id' | 'employee_id' | 'mandate_id' | 'biller_client_id' | 'payroll_id' | 'currency';

/**
 * A collection attempt on a payment request (fixture): the payment's identity columns come from the
 * payment (the currency unless given), the figures as given.
 */
export async function createCollectionAttemptRow(
  db: Database,
  payment: { id: string; employee_id: string; mandate_id: string; biller_client_id: string; payroll_id: string; currency: string },
  values: Omit<Insertable<CollectionAttemptsTable>, PaymentIdentity> & { currency?: string },
) {
  return db
    .insertInto('collection_attempts')
    .values({
      payment_request_id: payment.id,
      employee_id: payment.employee_id,
      mandate_id: payment.mandate_id,
      biller_client_id: payment.biller_client_id,
      payroll_id: payment.payroll_id,
      currency: payment.currency,
      ...values,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * A payout inserted directly (fixture). Each item gets the collection attempt and ledger entry a
 * real payout item stands on; the amount defaults to the items' sum (or 10000 without items).
 */
export async function createPayoutRow(
  db: Database,
  options: {
    billerClientId: string;
    currency?: string;
    status?: 'pending' | 'paid' | 'failed';
    payoutDate?: string;
    amount?: number;
    items?: Array<{ paymentRequestId: string; kind: 'payment_collected' | 'collection_reversed'; amount: number }>;
  },
) {
  const n = next();
  const items = options.items ?? [];
  const payout = await db
    .insertInto('payouts')
    .values({
      biller_client_id: options.billerClientId,
      currency: options.currency ?? 'GBP',
      amount: options.amount ?? (items.length > 0 ? items.reduce((sum, item) => sum + item.amount, 0) : 10_000),
      status: options.status ?? 'pending',
      payout_date: options.payoutDate ?? new Date(Date.UTC(2026, 0, 1) + n * 86_400_000).toISOString().slice(0, 10),
      reference: `PAYOUT-${n}-${crypto.randomUUID().slice(0, 8)}`,
      account_number: '55779911',
      sort_code: '20-00-00',
      account_holder_name: 'Biller Beneficiary Ltd',
      paid_at: options.status === 'paid' ? new Date() : null,
      failed_at: options.status === 'failed' ? new Date() : null,
      failure_reason: options.status === 'failed' ? 'Account closed' : null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  for (const item of items) {
    const payment = await db.selectFrom('payment_requests').selectAll().where('id', '=', item.paymentRequestId).executeTakeFirstOrThrow();
    const attempt =
      (await db
        .selectFrom('collection_attempts')
        .selectAll()
        .where('payment_request_id', '=', payment.id)
        .where('pay_date', '=', payment.target_pay_date)
        .executeTakeFirst()) ??
      (await createCollectionAttemptRow(db, payment, {
        pay_date: payment.target_pay_date,
        attempt_number: 1,
        requested_amount: payment.amount,
        outcome: 'collected',
      }));
    const earlier = await db
      .selectFrom('ledger_entries')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('collection_attempt_id', '=', attempt.id)
      .where('kind', '=', item.kind)
      .executeTakeFirstOrThrow();
    const entry = await db
      .insertInto('ledger_entries')
      .values({
        biller_client_id: options.billerClientId,
        payment_request_id: payment.id,
        collection_attempt_id: attempt.id,
        revision: Number(earlier.count),
        kind: item.kind,
        amount: item.amount,
        currency: payout.currency,
        pay_date: payment.target_pay_date,
        payout_id: payout.id,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await db
      .insertInto('payout_items')
      .values({ payout_id: payout.id, ledger_entry_id: entry.id, payment_request_id: payment.id, kind: item.kind, amount: item.amount })
      .execute();
  }
  return payout;
}
