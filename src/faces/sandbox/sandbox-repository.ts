import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { SandboxesTable } from '../../platform/db/tables.ts';

// A live biller's sandbox: the link between it, its twin client and the simulated provider whose
// directory the twin sees. The directory itself is written through the payrolls area's repository.

export type SandboxRow = Selectable<SandboxesTable>;

export async function insertSandbox(db: Executor, sandbox: Insertable<SandboxesTable>): Promise<SandboxRow> {
  return db.insertInto('sandboxes').values(sandbox).returningAll().executeTakeFirstOrThrow();
}

export async function findSandboxOfLiveBiller(db: Executor, liveBillerClientId: string): Promise<SandboxRow | undefined> {
  return db.selectFrom('sandboxes').selectAll().where('live_biller_client_id', '=', liveBillerClientId).executeTakeFirst();
}

/** The sandbox a sandbox biller (the twin) belongs to. */
export async function findSandboxOfBiller(db: Executor, billerClientId: string): Promise<SandboxRow | undefined> {
  return db.selectFrom('sandboxes').selectAll().where('biller_client_id', '=', billerClientId).executeTakeFirst();
}

/** Row-locked: two `sandbox create` runs for one biller take turns, so the second finds the first's sandbox. */
export async function rowLockClient(db: Executor, clientId: string) {
  return db.selectFrom('clients').select(['id', 'name', 'role', 'sandbox']).where('id', '=', clientId).forUpdate().executeTakeFirst();
}

export async function findClientName(db: Executor, clientId: string): Promise<string | undefined> {
  return (await db.selectFrom('clients').select('name').where('id', '=', clientId).executeTakeFirst())?.name;
}

export async function listActiveBeneficiaryAccounts(db: Executor, billerClientId: string) {
  return db
    .selectFrom('beneficiary_accounts')
    .select(['currency', 'account_number', 'sort_code', 'account_holder_name'])
    .where('biller_client_id', '=', billerClientId)
    .where('active', '=', true)
    .orderBy('currency')
    .execute();
}

/** A payroll of this provider; another provider's (or an unknown id) is undefined. */
export async function findPayrollOfProvider(db: Executor, providerId: string, payrollId: string) {
  return db.selectFrom('payrolls').select(['id', 'currency']).where('id', '=', payrollId).where('payroll_provider_id', '=', providerId).executeTakeFirst();
}

/** The provider's payrolls with their employers: what `sandbox create` reports it made. */
export async function listPayrollsOfProvider(db: Executor, providerId: string) {
  return db
    .selectFrom('payrolls')
    .innerJoin('employers', 'employers.id', 'payrolls.employer_id')
    .select([
      'payrolls.id',
      'payrolls.name',
      'payrolls.payment_run_frequency',
      'payrolls.currency',
      'employers.id as employer_id',
      'employers.name as employer_name',
      'employers.salary_deduction_opt_in_status as employer_opt_in',
    ])
    .where('payrolls.payroll_provider_id', '=', providerId)
    .orderBy('employers.name')
    .orderBy('payrolls.name')
    .execute();
}

/** Every employment of the provider's employees, with who they are: a sandbox holds a few hundred at most. */
export async function listEmploymentsOfProvider(db: Executor, providerId: string) {
  return db
    .selectFrom('employments')
    .innerJoin('employees', 'employees.id', 'employments.employee_id')
    .innerJoin('employers', 'employers.id', 'employments.employer_id')
    .select([
      'employees.id as employee_id',
      'employees.given_name',
      'employees.family_name',
      'employees.national_registration_number',
      'employees.date_of_birth',
      'employees.postal_code',
      'employments.payroll_id',
      'employments.payroll_reference',
      'employments.employment_status',
      'employers.name as employer_name',
      'employers.salary_deduction_opt_in_status as employer_opt_in',
    ])
    .where('employees.payroll_provider_id', '=', providerId)
    .orderBy('employers.name')
    .orderBy('employments.payroll_id')
    .orderBy('employments.payroll_reference')
    .execute();
}

/** The latest pay date of the biller's ledger entries not paid out yet: what a payout now would settle. */
export async function findLatestUnpaidPayDate(db: Executor, billerClientId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.max('pay_date').as('pay_date'))
    .where('biller_client_id', '=', billerClientId)
    .where('payout_id', 'is', null)
    .executeTakeFirst();
  return row?.pay_date ?? undefined;
}

/** The date of the biller's latest payout, whatever became of it. */
export async function findLatestPayoutDate(db: Executor, billerClientId: string): Promise<string | null> {
  const row = await db
    .selectFrom('payouts')
    .select((eb) => eb.fn.max('payout_date').as('payout_date'))
    .where('biller_client_id', '=', billerClientId)
    .executeTakeFirst();
  return row?.payout_date ?? null;
}

/** The biller's payment requests a payroll pay date attempted to collect, as they stand now. */
export async function listPaymentsAttemptedOn(db: Executor, billerClientId: string, payrollId: string, payDate: string) {
  return db
    .selectFrom('collection_attempts')
    .innerJoin('payment_requests', 'payment_requests.id', 'collection_attempts.payment_request_id')
    .select([
      'payment_requests.id',
      'payment_requests.employee_id',
      'payment_requests.status',
      'payment_requests.currency',
      'payment_requests.amount',
      'payment_requests.collected_amount',
      'collection_attempts.outcome',
    ])
    .where('collection_attempts.biller_client_id', '=', billerClientId)
    .where('collection_attempts.payroll_id', '=', payrollId)
    .where('collection_attempts.pay_date', '=', payDate)
    .orderBy('payment_requests.id')
    .execute();
}
