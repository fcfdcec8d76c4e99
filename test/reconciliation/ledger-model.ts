import { deepStrictEqual } from 'node:assert/strict';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { Database } from '../../src/db/connection.ts';
import { performRerun, requestRerun } from '../../src/reruns/rerun-service.ts';
import { knownProblem } from '../../src/http/plugins/errors.ts';
import { findBrokenLedgerLinks } from '../../src/ledger/ledger-repository.ts';
import { revokeMandate } from '../../src/mandates/mandate-service.ts';
import { cancelPaymentRequest, getPayment, insertNewPaymentRequests } from '../../src/payments/payment-service.ts';
import { cliActor } from '../../src/audit/audit-service.ts';
import { markPayoutFailed, markPayoutPaid, runPayouts } from '../../src/payouts/payout-service.ts';
import { createWorld, PD1, PD2, PD3, type World } from './reconciliation-world.ts';

// The ledger's promises, as a model that any sequence of operations must keep: fast-check generates
// the sequences. `npm test` runs it with a fixed seed (ledger-invariants.test.ts); test/fuzz runs it
// with fresh seeds for as long as you like and prints what fails. Everything goes through the same
// service functions the jobs, routes and CLI call.
//
// After every operation:
//  - per payment: collected_amount = its ledger entries = its attempts' collected, 0 <= it <= amount;
//    paid_out_amount = its entries that sit in a payout; the status agrees with the money;
//  - per attempt: collected = its entries; no (attempt, revision, kind) twice; no link to nothing;
//  - payouts: a pending or paid payout's amount = its unreleased items; every paid-out entry sits in
//    exactly one unreleased item, of the same amount, of the payout it points at; a failed payout holds
//    nothing;
//  - events: every version of a payment has exactly one event, and the latest says what GET says.
// Once everything is reconciled: per employee and pay date, collected + held (current exceptions) =
// what the latest record says was deducted; and reconciling again writes nothing.

export const PAY_DATES = [PD1, PD2, PD3] as const;
export type PayDateIndex = 0 | 1 | 2;
export const EMPLOYEES = 2;

export type LedgerOperation =
  | { kind: 'push'; employee: number; payDate: PayDateIndex; amount: number; reconcileAfter: boolean }
  | { kind: 'reconcile'; payDate: PayDateIndex; final: boolean }
  | { kind: 'rerun'; payDate: PayDateIndex }
  | { kind: 'lockNext' }
  | { kind: 'newPayment'; employee: number; amount: number; allowPostDue: boolean }
  | { kind: 'cancel'; payment: number }
  | { kind: 'revoke'; employee: number }
  | { kind: 'payout' }
  | { kind: 'payoutFailed' }
  | { kind: 'payoutPaid' };

export interface PaymentSpec {
  employee: number;
  amount: number;
  allowPostDue: boolean;
  due: string | null;
  payDate: PayDateIndex;
}

export interface LedgerScenario {
  payments: PaymentSpec[];
  operations: LedgerOperation[];
}

// Mostly amounts near what is asked, so versions often change the split; sometimes nothing or far too much.
const deductedAmount = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4_000 }), fc.integer({ min: 4_000, max: 9_000 }), fc.integer({ min: 9_000, max: 20_000 }));
const payDateIndex = fc.constantFrom<PayDateIndex>(0, 1, 2);
const employee = fc.integer({ min: 0, max: EMPLOYEES - 1 });

const operation: fc.Arbitrary<LedgerOperation> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant('push' as const), employee, payDate: payDateIndex, amount: deductedAmount, reconcileAfter: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('reconcile' as const), payDate: payDateIndex, final: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rerun' as const), payDate: payDateIndex }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'lockNext' as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('newPayment' as const), employee, amount: fc.integer({ min: 500, max: 6_000 }), allowPostDue: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), payment: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revoke' as const), employee }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'payout' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'payoutFailed' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'payoutPaid' as const }) },
);

const paymentSpec: fc.Arbitrary<PaymentSpec> = fc.record({
  employee,
  amount: fc.integer({ min: 500, max: 6_000 }),
  allowPostDue: fc.boolean(),
  due: fc.constantFrom('2026-11-01', '2026-11-05', '2026-12-01', '2026-12-31', null),
  payDate: fc.constantFrom<PayDateIndex>(0, 0, 1, 2),
});

export const ledgerScenario: fc.Arbitrary<LedgerScenario> = fc.record({
  payments: fc.array(paymentSpec, { minLength: 2, maxLength: 6 }),
  operations: fc.array(operation, { minLength: 3, maxLength: 24 }),
});

/** A ledger promise that did not hold, with what was found. */
export class LedgerInvariantError extends Error {
  override readonly name = 'LedgerInvariantError';
}

function expectNone(what: string, rows: readonly unknown[]): void {
  if (rows.length > 0) throw new LedgerInvariantError(`${what}: ${JSON.stringify(rows)}`);
}

/** Payouts are dated one day apart from this day on, so each run of a scenario is a new payout day. */
const FIRST_PAYOUT_DAY = Date.UTC(2027, 1, 1);

export interface LedgerModel {
  world: World;
  paymentIds: string[];
  lockedPayDates: Set<string>;
  payouts: number;
}

async function addPayment(db: Database, model: LedgerModel, spec: PaymentSpec): Promise<void> {
  const person = model.world.people[spec.employee]!;
  const [row] = await db.transaction().execute((trx) =>
    insertNewPaymentRequests(trx, [
      {
        billerClientId: model.world.biller.clientId,
        mandateId: person.mandate.id,
        scheduleId: null,
        instalmentNumber: null,
        payrollId: model.world.payroll.id,
        employeeId: person.employee.id,
        currency: 'GBP',
        amount: spec.amount,
        dueDate: spec.due,
        allowPostDueDateDeduction: spec.allowPostDue,
        targetPayDate: PAY_DATES[spec.payDate],
        metadata: null,
      },
    ]),
  );
  model.paymentIds.push(row!.id);
}

/** A biller or operator refused by the service (409 and the like) is part of the model, not a failure. */
async function refusedIsFine(work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    const refusal = knownProblem(error);
    if (!refusal || refusal.status >= 500) throw error;
  }
}

export async function startScenario(db: Database, payments: readonly PaymentSpec[]): Promise<LedgerModel> {
  const world = await createWorld(db, { employees: EMPLOYEES });
  await db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: world.biller.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Model Biller Ltd' })
    .execute();
  const model: LedgerModel = { world, paymentIds: [], lockedPayDates: new Set(), payouts: 0 };
  for (const spec of payments) await addPayment(db, model, spec);
  await world.lock(PD1);
  model.lockedPayDates.add(PD1);
  return model;
}

async function latestPendingPayout(db: Database, model: LedgerModel) {
  return db
    .selectFrom('payouts')
    .select('id')
    .where('biller_client_id', '=', model.world.biller.clientId)
    .where('status', '=', 'pending')
    .orderBy('payout_date', 'desc')
    .executeTakeFirst();
}

export async function applyOperation(db: Database, model: LedgerModel, op: LedgerOperation): Promise<void> {
  const { world } = model;
  switch (op.kind) {
    case 'push':
      await world.push(world.people[op.employee]!.employee.id, PAY_DATES[op.payDate], op.amount);
      if (op.reconcileAfter) await world.reconcile(PAY_DATES[op.payDate]);
      return;
    case 'reconcile':
      await world.reconcile(PAY_DATES[op.payDate], { final: op.final });
      return;
    case 'rerun': {
      const payDate = PAY_DATES[op.payDate];
      if (!model.lockedPayDates.has(payDate)) return;
      const rerun = await requestRerun(db, { payrollId: world.payroll.id, payDate, reason: 'ledger model', actor: cliActor('fast-check') });
      await performRerun(db, rerun.id);
      return;
    }
    case 'lockNext': {
      const next = PAY_DATES.find((payDate) => !model.lockedPayDates.has(payDate));
      if (next === undefined) return;
      await world.lock(next);
      model.lockedPayDates.add(next);
      return;
    }
    case 'newPayment': {
      const open = PAY_DATES.findIndex((payDate) => !model.lockedPayDates.has(payDate));
      if (open < 0) return;
      await addPayment(db, model, { employee: op.employee, amount: op.amount, allowPostDue: op.allowPostDue, due: null, payDate: open as PayDateIndex });
      return;
    }
    case 'cancel': {
      const paymentId = model.paymentIds[op.payment % model.paymentIds.length]!;
      await refusedIsFine(() => db.transaction().execute((trx) => cancelPaymentRequest(trx, world.biller.clientId, paymentId)));
      return;
    }
    case 'revoke':
      await refusedIsFine(() => db.transaction().execute((trx) => revokeMandate(trx, world.biller.clientId, world.people[op.employee]!.mandate.id)));
      return;
    case 'payout': {
      const today = new Date(FIRST_PAYOUT_DAY + model.payouts * 86_400_000).toISOString().slice(0, 10);
      model.payouts += 1;
      const summary = await runPayouts(db, { funding: 'deducted', today, settlementDelayWorkingDays: 0, holidays: new Set() });
      const failed = summary.groups.filter((group) => group.outcome === 'failed');
      expectNone('payout groups failed', failed);
      return;
    }
    case 'payoutFailed': {
      const payout = await latestPendingPayout(db, model);
      if (payout) await db.transaction().execute((trx) => markPayoutFailed(trx, payout.id, { actor: cliActor('ledger-model'), reason: 'account closed' }));
      return;
    }
    case 'payoutPaid': {
      const payout = await latestPendingPayout(db, model);
      if (payout) await db.transaction().execute((trx) => markPayoutPaid(trx, payout.id, { actor: cliActor('ledger-model') }));
      return;
    }
  }
}

export async function checkLedgerInvariants(db: Database, model: LedgerModel): Promise<void> {
  const payrollId = model.world.payroll.id;
  const paymentsOutOfBalance = await sql<{ id: string; status: string; amount: number; collected_amount: number; paid_out_amount: number }>`
    select pr.id, pr.status, pr.amount, pr.collected_amount, pr.paid_out_amount from payment_requests pr
    where pr.payroll_id = ${payrollId}
      and (pr.collected_amount <> coalesce((select sum(amount) from ledger_entries le where le.payment_request_id = pr.id), 0)
           or pr.collected_amount < 0 or pr.collected_amount > pr.amount
           or pr.collected_amount <> coalesce((select sum(a.collected_amount) from collection_attempts a where a.payment_request_id = pr.id), 0)
           or pr.paid_out_amount <> coalesce((select sum(amount) from ledger_entries le where le.payment_request_id = pr.id and le.payout_id is not null), 0)
           or (pr.status = 'paid_out' and not (pr.collected_amount = pr.amount and pr.paid_out_amount = pr.amount))
           or (pr.status = 'collected' and pr.collected_amount <> pr.amount)
           or (pr.status = 'failed' and pr.collected_amount <> 0)
           -- Pending or instructed may be covered in full for a while: a correction on an earlier pay date
           -- can collect a payment a later pay date has attempted or instructed, and the status is that
           -- later pay date's to settle when it reconciles next (settleAndCheck holds it to that).
           or (pr.status = 'partially_collected' and not (pr.collected_amount > 0 and pr.collected_amount < pr.amount)))
  `.execute(db);
  expectNone('payments whose money or status disagree with the ledger', paymentsOutOfBalance.rows);

  const attemptsOutOfBalance = await sql<{ id: string }>`
    select a.id from collection_attempts a
    where a.payroll_id = ${payrollId}
      and a.collected_amount <> coalesce((select sum(amount) from ledger_entries le where le.collection_attempt_id = a.id), 0)
  `.execute(db);
  expectNone('attempts whose collected amount is not their ledger entries', attemptsOutOfBalance.rows);

  const repeatedKeys = await sql<{ collection_attempt_id: string }>`
    select le.collection_attempt_id, le.revision, le.kind from ledger_entries le
    join collection_attempts a on a.id = le.collection_attempt_id
    where a.payroll_id = ${payrollId}
    group by le.collection_attempt_id, le.revision, le.kind having count(*) > 1
  `.execute(db);
  expectNone('ledger entries posted twice', repeatedKeys.rows);

  const payouts = await sql<{ id: string; problem: string }>`
    select po.id, 'amount is not its unreleased items' as problem from payouts po
    where po.biller_client_id = ${model.world.biller.clientId} and po.status <> 'failed'
      and po.amount <> coalesce((select sum(i.amount) from payout_items i where i.payout_id = po.id and i.released_at is null), 0)
    union all
    select po.id, 'failed, yet holds items or entries' from payouts po
    where po.biller_client_id = ${model.world.biller.clientId} and po.status = 'failed'
      and (exists (select 1 from payout_items i where i.payout_id = po.id and i.released_at is null)
           or exists (select 1 from ledger_entries le where le.payout_id = po.id))
    union all
    select le.id, 'paid-out entry not in exactly one unreleased item of its payout' from ledger_entries le
    where le.biller_client_id = ${model.world.biller.clientId} and le.payout_id is not null
      and (select count(*) from payout_items i where i.ledger_entry_id = le.id and i.released_at is null
             and i.payout_id = le.payout_id and i.amount = le.amount) <> 1
  `.execute(db);
  expectNone('payouts that disagree with their entries', payouts.rows);

  expectNone('ledger links to nothing', await findBrokenLedgerLinks(db, model.paymentIds));
  await checkEventsAgreeWithPayments(db, model.world.biller.clientId, model.paymentIds);
}

/** Every version of a payment has one event, and the latest is what GET /payments/{id} answers. */
export async function checkEventsAgreeWithPayments(db: Database, billerClientId: string, paymentIds: readonly string[]): Promise<void> {
  const payments = await db.selectFrom('payment_requests').select(['id', 'status', 'version']).where('id', 'in', paymentIds).execute();
  const events = await db
    .selectFrom('events')
    .select(['resource_id', 'payload'])
    .where('resource_id', 'in', paymentIds)
    .where('type', 'in', ['payment_request.created', 'payment_request.updated'])
    .orderBy('sequence')
    .execute();
  for (const payment of payments) {
    const data = events.filter((event) => event.resource_id === payment.id).map((event) => (event.payload as { data: { version: number } }).data);
    const versions = data.map((d) => d.version).sort((a, b) => a - b);
    const expected = Array.from({ length: payment.version }, (_, i) => i + 1);
    if (JSON.stringify(versions) !== JSON.stringify(expected)) {
      throw new LedgerInvariantError(`payment ${payment.id} (${payment.status}, version ${payment.version}) has event versions ${JSON.stringify(versions)}`);
    }
    const latest = data.reduce((a, b) => (b.version > a.version ? b : a));
    try {
      // What the route answers: the service function behind GET /payments/{id}, for the payment's biller.
      deepStrictEqual(latest, await getPayment(db, billerClientId, payment.id));
    } catch (error) {
      throw new LedgerInvariantError(`payment ${payment.id}: its latest event is not what GET answers\n${(error as Error).message}`);
    }
  }
}

/** Collected + held as current exceptions = the latest record's deduction, per employee and pay date. */
export async function checkNothingCountedTwice(db: Database, model: LedgerModel, payDate: string): Promise<void> {
  const payrollId = model.world.payroll.id;
  const result = await sql<{ employee_id: string; deducted: number; collected: number; held: number }>`
    with latest as (
      select distinct on (employee_id) employee_id, version, deduction_amount
      from deduction_records where payroll_id = ${payrollId} and pay_date = ${payDate}
      order by employee_id, version desc
    )
    select l.employee_id, l.deduction_amount as deducted,
           coalesce((select sum(a.collected_amount) from collection_attempts a
                     join payment_requests pr on pr.id = a.payment_request_id
                     where a.payroll_id = ${payrollId} and a.pay_date = ${payDate} and pr.employee_id = l.employee_id), 0)::bigint as collected,
           coalesce((select sum(e.amount) from reconciliation_exceptions e
                     where e.payroll_id = ${payrollId} and e.pay_date = ${payDate} and e.employee_id = l.employee_id
                       and e.superseded_at is null and e.kind in ('over_deduction', 'unexpected_employee')), 0)::bigint as held
    from latest l
  `.execute(db);
  expectNone(
    `employees on ${payDate} whose collected + held is not what payroll deducted`,
    result.rows.filter((row) => row.collected + row.held !== row.deducted),
  );
}

async function ledgerCount(db: Database, model: LedgerModel): Promise<number> {
  const row = await db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('payment_request_id', 'in', model.paymentIds)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The end of every settlement window: each locked pay date reconciled in final mode over the latest
 * records, once, in date order (as the nightly sweep does); then the end-state promises, and
 * reconciling again writes nothing.
 */
export async function settleAndCheck(db: Database, model: LedgerModel): Promise<void> {
  const locked = PAY_DATES.filter((payDate) => model.lockedPayDates.has(payDate));
  for (const payDate of locked) await model.world.reconcile(payDate, { final: true });
  await checkLedgerInvariants(db, model);
  const coveredYetOpen = await db
    .selectFrom('payment_requests')
    .select(['id', 'status', 'amount', 'collected_amount', 'target_pay_date'])
    .where('id', 'in', model.paymentIds)
    .where('status', 'in', ['pending', 'instructed'])
    .whereRef('collected_amount', '>=', 'amount')
    .execute();
  expectNone('payments collected in full, yet still pending or instructed once every pay date is reconciled', coveredYetOpen);
  for (const payDate of locked) await checkNothingCountedTwice(db, model, payDate);
  const entries = await ledgerCount(db, model);
  for (const payDate of locked) {
    const summary = await model.world.reconcile(payDate, { final: true });
    const wrote = summary.ledgerEntries + summary.paymentsUpdated + summary.exceptions + summary.exceptionsSuperseded > 0;
    expectNone(`a reconciliation of ${payDate} over the same records wrote`, wrote ? [summary] : []);
  }
  if ((await ledgerCount(db, model)) !== entries) throw new LedgerInvariantError('reconciling again posted ledger entries');
}

/** One scenario from start to end, checking after every operation. */
export async function runLedgerScenario(db: Database, scenario: LedgerScenario): Promise<void> {
  const model = await startScenario(db, scenario.payments);
  await checkLedgerInvariants(db, model);
  for (const op of scenario.operations) {
    await applyOperation(db, model, op);
    await checkLedgerInvariants(db, model);
  }
  await settleAndCheck(db, model);
}

export const ledgerProperty = (db: Database) => fc.asyncProperty(ledgerScenario, (scenario) => runLedgerScenario(db, scenario));
