import { sql } from 'kysely';
import type { Executor } from '../../../platform/db/connection.ts';

export async function insertPayrollProvider(
  db: Executor,
  provider: {
    name: string;
    api_base_url: string | null;
    api_token_url: string | null;
    api_client_id: string | null;
    api_client_secret: string | null;
    lead_time_working_days: number;
  },
) {
  return db.insertInto('payroll_providers').values(provider).returningAll().executeTakeFirstOrThrow();
}

export async function insertCollectionAccount(db: Executor, account: { currency: string; account_number: string; sort_code: string; account_holder_name: string }) {
  return db.insertInto('collection_accounts').values(account).returningAll().executeTakeFirstOrThrow();
}

export async function insertBeneficiaryAccount(
  db: Executor,
  account: { biller_client_id: string; currency: string; account_number: string; sort_code: string; account_holder_name: string },
) {
  return db.insertInto('beneficiary_accounts').values(account).returningAll().executeTakeFirstOrThrow();
}

/** The earliest pay date of each payroll whose lock is still ahead of `today`. */
export async function firstOpenLockDates(db: Executor, today: string) {
  return db
    .selectFrom('pay_dates')
    .select(['payroll_id'])
    .select((eb) => eb.fn.min('lock_date').as('lock_date'))
    .where('lock_date', '>', today)
    .where('locked_at', 'is', null)
    .groupBy('payroll_id')
    .execute();
}

export async function listLockedSnapshots(db: Executor) {
  return db
    .selectFrom('deduction_snapshots')
    .innerJoin('payrolls', 'payrolls.id', 'deduction_snapshots.payroll_id')
    .innerJoin('employers', 'employers.id', 'payrolls.employer_id')
    .select([
      'deduction_snapshots.id',
      'deduction_snapshots.payroll_id',
      'deduction_snapshots.pay_date',
      'deduction_snapshots.pay_period',
      'deduction_snapshots.employee_count',
      'deduction_snapshots.total_amount',
      'deduction_snapshots.currency',
      'employers.name as employer',
      'payrolls.name as payroll',
      'payrolls.payment_run_frequency',
    ])
    .where('deduction_snapshots.status', '!=', 'superseded')
    .orderBy('deduction_snapshots.pay_date')
    .orderBy('employers.name')
    .execute();
}

/** Every payroll with its name and its employer's, for the demo's tables. */
export async function listPayrollNames(db: Executor) {
  return db
    .selectFrom('payrolls')
    .innerJoin('employers', 'employers.id', 'payrolls.employer_id')
    .select(['payrolls.id', 'payrolls.name', 'employers.name as employer'])
    .execute();
}

export async function listInstructionFiles(db: Executor) {
  return (
    db
      .selectFrom('instruction_files as f')
      .select(['f.file_name', 'f.content', 'f.sha256', 'f.item_count'])
      // How many items say new, amend, stop and continue: what the clerk will key.
      .select(
        sql<Record<string, number> | null>`(
        select jsonb_object_agg(action, items) from (
          select action, count(*)::int as items from instruction_items where instruction_file_id = f.id group by action
        ) counted)`.as('actions'),
      )
      .orderBy('f.file_name')
      .execute()
  );
}

export async function countSnapshotsByStatus(db: Executor) {
  const rows = await db
    .selectFrom('deduction_snapshots')
    .select(['status'])
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('employee_count', '>', 0)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])) as Record<string, number>;
}

export async function countUndispatchedEvents(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('dispatched_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countEventsOf(db: Executor, billerClientIds: readonly string[]): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('biller_client_id', 'in', billerClientIds)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
