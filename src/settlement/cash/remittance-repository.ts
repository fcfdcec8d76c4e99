import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { RemittanceStatus } from '../../platform/db/tables.ts';
import type { PayDateKey } from '../../platform/pay-date-exceptions/pay-date-exceptions.ts';

/**
 * One advisory lock serialises what moves cash: statement imports, matching, unmatching and funding
 * take it exclusively; each payout group takes it shared, so it never pays an entry that an unmatch is
 * taking back. Held to the end of the transaction.
 */
const CASH_ADVISORY_LOCK_KEY = 0x5d_ca_5e;

export async function advisoryLockCash(trx: Executor, mode: 'exclusive' | 'shared'): Promise<void> {
  await (mode === 'exclusive' ? sql`select pg_advisory_xact_lock(${CASH_ADVISORY_LOCK_KEY})` : sql`select pg_advisory_xact_lock_shared(${CASH_ADVISORY_LOCK_KEY})`).execute(
    trx,
  );
}

export interface RemittanceFacts {
  payroll_id: string;
  pay_date: string;
  employer_id: string;
  currency: string;
  payment_reference: string;
  /** What the current snapshot asks the employer to remit: 0 when a re-run left it nothing to ask for. */
  requested: number;
  /** What payroll reported it deducted (the latest counting record per employee), exact; null before it has. */
  deducted: bigint | null;
  remittance_id: string | null;
  /** The remittance as recorded (null before it exists): what a refresh compares and builds on. */
  recorded_requested: number | null;
  recorded_deducted: number | null;
  recorded_reference: string | null;
  received: number | null;
  status: RemittanceStatus | null;
  expected: number | null;
  shortfall: number | null;
  overdue_at: Date | null;
  /** The version read: a save changes the remittance only if it is still this one. */
  version: number | null;
}

/** Which pay dates a refresh looks at: every one from a day on (the nightly-scale refresh), or the ones named. */
export type RemittanceScope = { since: string } | { payDates: readonly PayDateKey[] };

/**
 * What each live payroll pay date with a payment requested (its current snapshot's) should be remitted,
 * beside its remittance as recorded. A pay date whose current snapshot requests nothing (a re-run that
 * released every request) but that has a remittance already is listed too, requesting 0.
 */
export async function listRemittanceFacts(db: Executor, scope: RemittanceScope) {
  const within =
    'since' in scope
      ? sql`s.pay_date >= ${scope.since}::date`
      : sql`(s.payroll_id, s.pay_date) in (select * from unnest(${scope.payDates.map((k) => k.payrollId)}::uuid[], ${scope.payDates.map((k) => k.payDate)}::date[]))`;
  const result = await sql<RemittanceFacts>`
    select s.payroll_id, to_char(s.pay_date, 'YYYY-MM-DD') as pay_date, p.employer_id,
           coalesce(rp.currency, r.currency) as currency, coalesce(rp.payment_reference, r.payment_reference) as payment_reference,
           coalesce(rp.payment_amount, 0) as requested, reported.deducted,
           r.id as remittance_id, r.requested as recorded_requested, r.deducted as recorded_deducted, r.payment_reference as recorded_reference,
           r.received, r.status, r.expected, r.shortfall, r.overdue_at, r.version
    from deduction_snapshots s
    left join requested_payments rp on rp.snapshot_id = s.id
    join payrolls p on p.id = s.payroll_id
    join payroll_providers pp on pp.id = p.payroll_provider_id and not pp.sandbox
    left join lateral (
      select sum(latest.deduction_amount) as deducted
      from (
        select distinct on (dr.employee_id) dr.deduction_amount
        from deduction_records dr
        where dr.payroll_id = s.payroll_id and dr.pay_date = s.pay_date and dr.void_id is null
        order by dr.employee_id, dr.version desc
      ) latest
    ) reported on true
    left join remittances r on r.payroll_id = s.payroll_id and r.pay_date = s.pay_date
    where s.status <> 'superseded' and (rp.snapshot_id is not null or r.id is not null) and ${within}
  `.execute(db);
  return result.rows;
}

export interface RemittanceRow {
  id: string;
  payrollId: string;
  payDate: string;
  employerId: string;
  currency: string;
  paymentReference: string;
  requested: number;
  deducted: number | null;
  expected: number;
  status: RemittanceStatus;
  dueDate: string;
  /** The version the row was computed from; null for a new remittance. */
  readVersion: number | null;
}

/**
 * Inserts new remittances and updates changed ones in one statement; received is never touched here.
 * A row is written only over the version it was computed from (a new one only where none exists): one
 * that another transaction changed or created meanwhile is left as that transaction wrote it, and its id
 * is missing from what this returns, for the caller to compute again. Rows go in key order, the order
 * rowLockRemittances takes, so that two writers never wait for each other in a circle.
 */
export async function saveRemittances(db: Executor, unordered: readonly RemittanceRow[]): Promise<Set<string>> {
  if (unordered.length === 0) return new Set();
  const rows = [...unordered].sort((a, b) => (a.payrollId < b.payrollId ? -1 : a.payrollId > b.payrollId ? 1 : a.payDate < b.payDate ? -1 : a.payDate > b.payDate ? 1 : 0));
  const column = <T>(pick: (row: RemittanceRow) => T) => rows.map(pick);
  // A new row goes in as version 1, an update as the version read plus one: `excluded.version - 1` is
  // the version read, which is never 0 (versions start at 1), so a row that appeared meanwhile is left alone.
  const result = await sql<{ id: string }>`
    insert into remittances (id, payroll_id, pay_date, employer_id, currency, payment_reference, requested, deducted, expected, status, due_date, version)
    select u.id, u.payroll_id, u.pay_date, u.employer_id, u.currency, u.payment_reference, u.requested, u.deducted, u.expected, u.status, u.due_date, u.version
    from unnest(${column((r) => r.id)}::uuid[], ${column((r) => r.payrollId)}::uuid[], ${column((r) => r.payDate)}::date[],
                ${column((r) => r.employerId)}::uuid[], ${column((r) => r.currency)}::text[], ${column((r) => r.paymentReference)}::text[],
                ${column((r) => r.requested)}::bigint[], ${column((r) => r.deducted)}::bigint[], ${column((r) => r.expected)}::bigint[],
                ${column((r) => r.status)}::text[], ${column((r) => r.dueDate)}::date[], ${column((r) => (r.readVersion ?? 0) + 1)}::integer[])
      as u(id, payroll_id, pay_date, employer_id, currency, payment_reference, requested, deducted, expected, status, due_date, version)
    on conflict (payroll_id, pay_date) do update
    set payment_reference = excluded.payment_reference, requested = excluded.requested, deducted = excluded.deducted,
        expected = excluded.expected, status = excluded.status, due_date = excluded.due_date,
        version = remittances.version + 1, updated_at = now()
    where remittances.version = excluded.version - 1
    returning id
  `.execute(db);
  return new Set(result.rows.map((row) => row.id));
}

/** Stamps remittances owed money past their due date that were not stamped yet; returns them. */
export async function markOverdue(db: Executor, today: string) {
  const result = await sql<{ id: string; payroll_id: string; pay_date: string; status: RemittanceStatus; due_date: string }>`
    update remittances set overdue_at = now()
    where overdue_at is null and received < expected and due_date < ${today}::date
    returning id, payroll_id, to_char(pay_date, 'YYYY-MM-DD') as pay_date, status, to_char(due_date, 'YYYY-MM-DD') as due_date
  `.execute(db);
  return result.rows;
}

export async function findRemittance(db: Executor, payrollId: string, payDate: string) {
  return db.selectFrom('remittances').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', payDate).executeTakeFirst();
}

/** Row-locked, in a stable order, so that concurrent changes to several remittances cannot deadlock. */
export async function rowLockRemittances(db: Executor, keys: ReadonlyArray<{ payrollId: string; payDate: string }>) {
  if (keys.length === 0) return [];
  const result = await sql<{
    id: string;
    payroll_id: string;
    pay_date: string;
    expected: number;
    received: number;
    shortfall: number;
    due_date: string;
    status: RemittanceStatus;
    currency: string;
  }>`
    select r.id, r.payroll_id, to_char(r.pay_date, 'YYYY-MM-DD') as pay_date, r.expected, r.received, r.shortfall, to_char(r.due_date, 'YYYY-MM-DD') as due_date, r.status, r.currency
    from remittances r
    join unnest(${keys.map((k) => k.payrollId)}::uuid[], ${keys.map((k) => k.payDate)}::date[]) as k(payroll_id, pay_date)
      on r.payroll_id = k.payroll_id and r.pay_date = k.pay_date
    order by r.payroll_id, r.pay_date
    for update of r
  `.execute(db);
  return result.rows;
}

/** Adds (or, negative, takes back) received cash and sets the shortfall and status the caller computed. */
export async function updateReceived(db: Executor, changes: ReadonlyArray<{ id: string; delta: number; shortfall: number; status: RemittanceStatus }>) {
  if (changes.length === 0) return;
  await sql`
    update remittances r
    set received = r.received + u.delta, shortfall = u.shortfall, status = u.status, version = r.version + 1, updated_at = now()
    from unnest(${changes.map((c) => c.id)}::uuid[], ${changes.map((c) => c.delta)}::bigint[], ${changes.map((c) => c.shortfall)}::bigint[],
                ${changes.map((c) => c.status)}::text[]) as u(id, delta, shortfall, status)
    where r.id = u.id
  `.execute(db);
}

/** The billers whose collections a payroll pay date's current snapshot carries (written by its lock): who hears of its remittance. */
export async function listBillersOfPayDates(db: Executor, keys: ReadonlyArray<{ payrollId: string; payDate: string }>) {
  if (keys.length === 0) return [];
  const result = await sql<{ payroll_id: string; pay_date: string; biller_client_id: string }>`
    with current_snapshots as (
      select s.id, s.payroll_id, s.pay_date
      from unnest(${keys.map((k) => k.payrollId)}::uuid[], ${keys.map((k) => k.payDate)}::date[]) as k(payroll_id, pay_date)
      join deduction_snapshots s on s.payroll_id = k.payroll_id and s.pay_date = k.pay_date and s.status <> 'superseded'
    )
    select s.payroll_id, to_char(s.pay_date, 'YYYY-MM-DD') as pay_date, b.biller_client_id
    from current_snapshots s join snapshot_billers b on b.snapshot_id = s.id
    union
    -- A snapshot locked by a worker older than snapshot_billers (during an upgrade) names no biller:
    -- its line payments say who. An empty snapshot has none either, and nothing to read.
    select s.payroll_id, to_char(s.pay_date, 'YYYY-MM-DD'), pr.biller_client_id
    from current_snapshots s
    join deduction_line_payments dlp on dlp.snapshot_id = s.id
    join payment_requests pr on pr.id = dlp.payment_request_id
    where not exists (select 1 from snapshot_billers b where b.snapshot_id = s.id)
  `.execute(db);
  return result.rows;
}

export interface RemittanceFilter {
  payDate?: string | undefined;
  status?: RemittanceStatus | undefined;
  payrollId?: string | undefined;
  limit: number;
}

export async function listRemittances(db: Executor, filter: RemittanceFilter) {
  let query = db
    .selectFrom('remittances as r')
    .innerJoin('employers as e', 'e.id', 'r.employer_id')
    .innerJoin('payrolls as p', 'p.id', 'r.payroll_id')
    .selectAll('r')
    .select(['e.name as employer_name', 'p.name as payroll_name']);
  if (filter.payDate) query = query.where('r.pay_date', '=', filter.payDate);
  if (filter.status) query = query.where('r.status', '=', filter.status);
  if (filter.payrollId) query = query.where('r.payroll_id', '=', filter.payrollId);
  return query.orderBy('r.pay_date', 'desc').orderBy('e.name').orderBy('r.payroll_id').limit(filter.limit).execute();
}

export async function listMatchesOfRemittance(db: Executor, payrollId: string, payDate: string) {
  return db
    .selectFrom('remittance_matches as m')
    .innerJoin('bank_credits as c', 'c.id', 'm.bank_credit_id')
    .selectAll('m')
    .select(['c.bank_reference', 'c.booking_date', 'c.amount as credit_amount', 'c.remittance_information', 'c.debtor_name'])
    .where('m.payroll_id', '=', payrollId)
    .where('m.pay_date', '=', payDate)
    .orderBy('m.matched_at')
    .orderBy('m.id')
    .execute();
}
