import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { deepStrictEqual } from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { Database } from '../../../src/platform/db/connection.ts';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { knownProblem } from '../../../src/faces/http/plugins/errors.ts';
import { findBrokenLedgerLinks } from '../../../src/cycle/ledger/ledger-repository.ts';
import { findPendingRequestsOffTheLockQueue } from '../../../src/cycle/snapshots/lock-queue-repository.ts';
import { findPayDatesThatCanTakeMore } from '../../../src/cycle/reconciliation/reconciliation-repository.ts';
import { payDatesToReconcileAfter, type ReconciliationSummary } from '../../../src/cycle/reconciliation/reconciliation-service.ts';
import { revokeMandate } from '../../../src/collections/mandates/mandate-service.ts';
import { cancelPaymentRequest, getPayment, insertNewPaymentRequests } from '../../../src/collections/payments/payment-service.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { StatementEntry } from '../../../src/settlement/cash/bank-statement.ts';
import { statementEntry, statementFile } from '../../support/cash.ts';
import { matchCreditManually, unmatch, type Allocation, type MatchingPolicy } from '../../../src/settlement/cash/matching-service.ts';
import { restoreCredit, setCreditAside } from '../../../src/settlement/cash/credit-decision-service.ts';
import { advisoryLockCash } from '../../../src/settlement/cash/remittance-repository.ts';
import { expectRemittances, refreshRemittances } from '../../../src/settlement/cash/remittance-service.ts';
import { expectedRemittance, remittanceStatus } from '../../../src/settlement/cash/remittance-status.ts';
import { lockPayDate, type PayDateFollowUp } from '../../../src/cycle/snapshots/pay-date-lock-service.ts';
import { DEFAULT_AMOUNT_LIMITS } from '../../../src/collections/payments/amount-limits.ts';
import { recordStatement } from '../../../src/settlement/cash/statement-import-service.ts';
import type { PayoutFunding } from '../../../src/platform/db/tables.ts';
import { createPaymentFiles, paymentFileDownload } from '../../../src/settlement/payouts/payment-file-service.ts';
import { markPayoutFailed, markPayoutPaid, runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
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
//  - cash: every credit has 0 <= matched_amount <= amount, and matched_amount = its live matches; every
//    remittance has received = its live matches, and the status its own figures give on the cash
//    policy's today. While the employer is funded by cash (payout funding `received`, its own or every
//    run's), per payroll pay date: paid out (entries in a payout) <= received, and funded entries
//    (funded_at set) <= received. Entries are signed: a reversal is negative and is always funded, so
//    `funded <= received` is about the signed sum and can hold with received 0 and funded below 0; what
//    it promises is that no collection is funded beyond cash. Summed over the employer's pay dates:
//    paid out <= received.
//  - expected remittances: every locked pay date that asks for a payment has one remittance, from its
//    lock on, requesting what its current snapshot asks (0 once a re-run asks for nothing).
// Once everything is reconciled: per employee and pay date, collected + held (current exceptions) =
// what the latest record says was deducted; each remittance expects what payroll reported (what was
// requested where it reported nothing); and reconciling again writes nothing.

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
  | { kind: 'payout'; funding: PayoutFunding }
  | { kind: 'payoutFailed' }
  | { kind: 'payoutPaid' }
  | { kind: 'statement'; credits: CreditShape[] }
  | { kind: 'manualMatch'; credit: number; remittance: number; percent: number; split: boolean }
  | { kind: 'unmatch'; match: number }
  | { kind: 'trustEmployer' }
  | { kind: 'noticeThenStatement'; credits: CreditShape[] }
  | { kind: 'reverse'; credit: number; asReturn: boolean }
  | { kind: 'returnedPayout'; amount: number }
  | { kind: 'setAside'; credit: number; restore: boolean }
  | { kind: 'paymentFiles'; twice: boolean };

/** How an employer pays one remittance on a statement, as banks and employers get it wrong. */
export type CreditVariant = 'exact' | 'short' | 'over' | 'mangledReference' | 'split' | 'twoPayDates';
export interface CreditShape {
  variant: CreditVariant;
  /** 1..99: how short, how much over, where split, which way the reference is mangled. */
  percent: number;
}

export interface PaymentSpec {
  employee: number;
  amount: number;
  allowPostDue: boolean;
  due: string | null;
  payDate: PayDateIndex;
}

export interface LedgerScenario {
  payments: PaymentSpec[];
  /** The employer's own payout funding at the start; null follows each payout run's default. */
  employerFunding?: PayoutFunding | null;
  operations: LedgerOperation[];
}

// Mostly amounts near what is asked, so versions often change the split; sometimes nothing or far too much.
const deductedAmount = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 4_000 }), fc.integer({ min: 4_000, max: 9_000 }), fc.integer({ min: 9_000, max: 20_000 }));
const payDateIndex = fc.constantFrom<PayDateIndex>(0, 1, 2);
const employee = fc.integer({ min: 0, max: EMPLOYEES - 1 });

const percent = fc.integer({ min: 1, max: 99 });
const creditShape: fc.Arbitrary<CreditShape> = fc.record({
  variant: fc.constantFrom<CreditVariant>('exact', 'exact', 'short', 'over', 'mangledReference', 'split', 'twoPayDates'),
  percent,
});

const operation: fc.Arbitrary<LedgerOperation> = fc.oneof(
  { weight: 16, arbitrary: fc.record({ kind: fc.constant('push' as const), employee, payDate: payDateIndex, amount: deductedAmount, reconcileAfter: fc.boolean() }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('reconcile' as const), payDate: payDateIndex, final: fc.boolean() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('rerun' as const), payDate: payDateIndex }) },
  { weight: 4, arbitrary: fc.constant({ kind: 'lockNext' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('newPayment' as const), employee, amount: fc.integer({ min: 500, max: 6_000 }), allowPostDue: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('cancel' as const), payment: fc.nat(7) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('revoke' as const), employee }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('payout' as const), funding: fc.constantFrom<PayoutFunding>('received', 'received', 'deducted') }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'payoutFailed' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'payoutPaid' as const }) },
  { weight: 12, arbitrary: fc.record({ kind: fc.constant('statement' as const), credits: fc.array(creditShape, { minLength: 1, maxLength: 3 }) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('manualMatch' as const),
      credit: fc.nat(15),
      remittance: fc.nat(5),
      percent: fc.integer({ min: 1, max: 100 }),
      split: fc.boolean(),
    }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('unmatch' as const), match: fc.nat(15) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'trustEmployer' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('noticeThenStatement' as const), credits: fc.array(creditShape, { minLength: 1, maxLength: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('reverse' as const), credit: fc.nat(15), asReturn: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('returnedPayout' as const), amount: fc.integer({ min: 1, max: 6_000 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('setAside' as const), credit: fc.nat(15), restore: fc.boolean() }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('paymentFiles' as const), twice: fc.boolean() }) },
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
  employerFunding: fc.constantFrom<PayoutFunding | null>('received', 'received', null),
  // Longer than the ledger alone needs: the cash operations bite only after a statement, a reconciled
  // pay date and a payout run.
  operations: fc.array(operation, { minLength: 3, maxLength: 30, size: 'max' }),
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

/**
 * Cash operations all run on one day, so a remittance's stored status can be checked against what its
 * figures give on that day (a later day would turn an untouched remittance late without a write).
 */
export const CASH_POLICY: MatchingPolicy = { today: '2026-11-10', lateWorkingDays: 3, toleranceMinor: 100, holidays: new Set() };

export interface LedgerModel {
  world: World;
  paymentIds: string[];
  lockedPayDates: Set<string>;
  payouts: number;
  employerFunding: PayoutFunding | null;
  /** Every payout run so far funded this employer by cash alone: the cash promises hold for it. */
  fundedByCash: boolean;
  statementIds: string[];
}

/** How many operations of each kind ran, and how the cash ones turned out: what a run really exercised. */
export const operationCounts: Record<string, number> = {};
function count(what: string): void {
  operationCounts[what] = (operationCounts[what] ?? 0) + 1;
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

export async function startScenario(db: Database, payments: readonly PaymentSpec[], employerFunding: PayoutFunding | null = null): Promise<LedgerModel> {
  const world = await createWorld(db, { employees: EMPLOYEES });
  if (employerFunding !== null) await db.updateTable('employers').set({ payout_funding: employerFunding }).where('id', '=', world.employer.id).execute();
  await db
    .insertInto('beneficiary_accounts')
    .values({ biller_client_id: world.biller.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Model Biller Ltd' })
    .execute();
  const model: LedgerModel = { world, paymentIds: [], lockedPayDates: new Set(), payouts: 0, employerFunding, fundedByCash: employerFunding !== 'deducted', statementIds: [] };
  for (const spec of payments) await addPayment(db, model, spec);
  await lockPayDate(db, world.payroll.id, PD1, { followUp: expectedRemittances });
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

/** What the lock, re-run and reconciliation jobs run in their transactions: the expected remittances, on the cash policy's day. */
const expectedRemittances: PayDateFollowUp = async (trx, payDates) => {
  await expectRemittances(trx, CASH_POLICY, payDates);
};

export async function applyOperation(db: Database, model: LedgerModel, op: LedgerOperation): Promise<void> {
  const { world } = model;
  count(op.kind);
  switch (op.kind) {
    case 'push':
      await world.push(world.people[op.employee]!.employee.id, PAY_DATES[op.payDate], op.amount);
      if (op.reconcileAfter) await world.reconcile(PAY_DATES[op.payDate], { followUp: expectedRemittances });
      return;
    case 'reconcile':
      await world.reconcile(PAY_DATES[op.payDate], { final: op.final, followUp: expectedRemittances });
      return;
    case 'rerun': {
      const payDate = PAY_DATES[op.payDate];
      if (!model.lockedPayDates.has(payDate)) return;
      const rerun = await requestRerun(db, { payrollId: world.payroll.id, payDate, reason: 'ledger model', actor: cliActor('fast-check'), force: true });
      await performRerun(db, rerun.id, DEFAULT_AMOUNT_LIMITS, expectedRemittances);
      return;
    }
    case 'lockNext': {
      const next = PAY_DATES.find((payDate) => !model.lockedPayDates.has(payDate));
      if (next === undefined) return;
      await lockPayDate(db, world.payroll.id, next, { followUp: expectedRemittances });
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
      const funding = op.funding;
      if ((model.employerFunding ?? funding) === 'deducted') model.fundedByCash = false;
      // Every payout of a few payments assembled in chunks (one per payment where it can), so the
      // sequences also hold the chunked assembly to the ledger's promises.
      const summary = await runPayouts(db, { funding, today, settlementDelayWorkingDays: 0, holidays: new Set(), concurrency: 3, minEntriesPerChunk: 1 });
      const failed = summary.groups.filter((group) => group.outcome === 'failed');
      expectNone('payout groups failed', failed);
      if (summary.groups.some((group) => group.outcome === 'paid_out' && group.billerClientId === world.biller.clientId)) count('payout: paid the model biller');
      return;
    }
    case 'trustEmployer':
      await db.updateTable('employers').set({ payout_funding: 'deducted' }).where('id', '=', world.employer.id).execute();
      model.employerFunding = 'deducted';
      model.fundedByCash = false;
      return;
    case 'statement':
      await receiveStatement(db, model, op.credits);
      return;
    case 'noticeThenStatement':
      await receiveStatement(db, model, op.credits, 'camt.054');
      return;
    case 'reverse':
      await reverseOne(db, model, op);
      return;
    case 'returnedPayout':
      await importEntries(db, model, [{ amount: op.amount, reference: null, reversal: true }], 'camt.053');
      return;
    case 'setAside':
      await setAsideOne(db, model, op);
      return;
    case 'paymentFiles':
      await writeAndDownloadPaymentFiles(db, model, op.twice);
      return;
    case 'manualMatch':
      await matchByHand(db, model, op);
      return;
    case 'unmatch':
      await unmatchOne(db, model, op.match);
      return;
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

const cashActor = cliActor('ledger-model');

async function modelRemittances(db: Database, model: LedgerModel) {
  return db.selectFrom('remittances').selectAll().where('payroll_id', '=', model.world.payroll.id).orderBy('pay_date').execute();
}

/** The payer's text as a bank may pass it on: other case and punctuation, words around it, or a typo. */
function mangle(reference: string, percent: number): string {
  switch (percent % 3) {
    case 0:
      return reference.toLowerCase().replace(/(\d{6})/, '-$1-');
    case 1:
      return `SALARY DEDUCTIONS ${reference.slice(0, 3)} ${reference.slice(3)} THANK YOU`;
    default: {
      // One digit wrong: names another remittance or none; no rule may take it on the amount alone.
      const last = reference.at(-1)!;
      return `${reference.slice(0, -1)}${last === '9' ? '0' : String(Number(last) + 1)}`;
    }
  }
}

const partOf = (amount: number, percent: number) => Math.max(1, Math.floor((amount * percent) / 100));

/**
 * A statement with credits for the world's remittances, each in one of the ways employers pay, imported
 * as the upload does (recordStatement), which runs the matching rules. Remittances are refreshed first
 * under the cash lock, as the import's matching would, so a newly locked pay date can be paid.
 */
async function receiveStatement(db: Database, model: LedgerModel, shapes: readonly CreditShape[], notice?: 'camt.054'): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await advisoryLockCash(trx, 'exclusive');
    await refreshRemittances(trx, CASH_POLICY);
  });
  const remittances = await modelRemittances(db, model);
  const credits: Array<{ amount: number; reference: string | null }> = [];
  shapes.forEach((shape, index) => {
    if (remittances.length === 0) {
      credits.push({ amount: 1_000 + shape.percent, reference: null });
      return;
    }
    const remittance = remittances[index % remittances.length]!;
    const owed = remittance.expected - remittance.received;
    const base = owed > 0 ? owed : Math.max(remittance.expected, 100);
    const reference = remittance.payment_reference;
    switch (shape.variant) {
      case 'exact':
        credits.push({ amount: base, reference });
        return;
      case 'short':
        credits.push({ amount: base > 1 ? Math.min(base - 1, partOf(base, shape.percent)) : 1, reference });
        return;
      case 'over':
        credits.push({ amount: base + partOf(base, shape.percent), reference });
        return;
      case 'mangledReference':
        credits.push({ amount: base, reference: mangle(reference, shape.percent) });
        return;
      case 'split': {
        const first = partOf(base, shape.percent);
        credits.push({ amount: first, reference });
        if (base - first > 0) credits.push({ amount: base - first, reference });
        return;
      }
      case 'twoPayDates': {
        const other = remittances[(index + 1) % remittances.length]!;
        if (other.id === remittance.id) {
          credits.push({ amount: base, reference });
          return;
        }
        const otherOwed = other.expected - other.received;
        credits.push({ amount: base + Math.max(otherOwed, 0), reference: `${reference} ${other.payment_reference}` });
        return;
      }
    }
  });
  if (notice) {
    // The same credits twice: notified intraday, then booked by the end-of-day statement. Counted once.
    const notified = await importEntries(db, model, credits, 'camt.054');
    const booked = await importEntries(db, model, credits, 'camt.053', notified.entryReferences);
    const outcomes = booked.outcome.statements.flatMap((statement) => statement.entries.map((entry) => entry.outcome));
    expectNone(
      'booked entries of notified credits not recognised as them',
      outcomes.filter((outcome) => outcome !== 'superseded'),
    );
    count('notice then statement: superseded');
  } else {
    const { outcome } = await importEntries(db, model, credits, 'csv');
    for (const [rule, matches] of Object.entries(outcome.matching?.byRule ?? {}))
      operationCounts[`matched by rule: ${rule}`] = (operationCounts[`matched by rule: ${rule}`] ?? 0) + matches;
  }
  for (const shape of shapes) count(`statement credit: ${shape.variant}`);
}

/**
 * A statement of the model's own making, imported as the upload does (recordStatement). Each entry's
 * AcctSvcrRef is its own unless `references` gives the ones to repeat (a booking of notified credits).
 */
async function importEntries(
  db: Database,
  model: LedgerModel,
  credits: ReadonlyArray<{
    amount: number;
    reference: string | null;
    reversal?: boolean;
    direction?: 'credit' | 'debit';
    accountServicerReference?: string;
    returnReason?: string;
  }>,
  format: 'csv' | 'camt.053' | 'camt.054',
  references?: readonly string[],
) {
  const account = await db
    .selectFrom('collection_accounts')
    .select(['sort_code', 'account_number'])
    .where('currency', '=', 'GBP')
    .where('active', '=', true)
    .executeTakeFirstOrThrow();
  // Ids of our own making, so picks by position (bank_reference order) replay under a fixed seed.
  const statementId = `LM-${model.world.payroll.id}-${String(model.statementIds.length + 1).padStart(3, '0')}`;
  const entries: StatementEntry[] = credits.map((credit, index) =>
    statementEntry(index, `${statementId}-${index}`, {
      amount: credit.amount,
      bookingDate: CASH_POLICY.today,
      valueDate: CASH_POLICY.today,
      remittanceInformation: credit.reference,
      debtorName: 'Model Employer Ltd',
      accountServicerReference: credit.accountServicerReference ?? references?.[index] ?? `${statementId}-${index}`,
      direction: credit.direction ?? 'credit',
      reversal: credit.reversal ?? false,
      returnReason: credit.returnReason ?? null,
    }),
  );
  const parsed = statementFile(account, statementId, entries, { format });
  const digest = createHash('sha256').update(JSON.stringify(parsed)).digest();
  const outcome = await db.transaction().execute((trx) => recordStatement(trx, { parsed, digest, fileName: `${statementId}.xml`, actor: cashActor, policy: CASH_POLICY }));
  model.statementIds.push(outcome.statement.id);
  return { outcome, entryReferences: entries.map((entry) => entry.accountServicerReference!) };
}

/** The model's credits the bank has not taken back, in a replayable order. */
async function modelCredits(db: Database, model: LedgerModel, states: ReadonlyArray<'open' | 'held' | 'set_aside'>) {
  if (model.statementIds.length === 0) return [];
  return db
    .selectFrom('bank_credits')
    .select(['id', 'amount', 'matched_amount', 'account_servicer_reference', 'state'])
    .where('bank_statement_id', 'in', model.statementIds)
    .where('state', 'in', states)
    .orderBy('bank_reference')
    .execute();
}

/**
 * The bank takes back one of the model's credits: a reversal (RvslInd) or a return (RtrInf), naming
 * the credit by its AcctSvcrRef. Whatever it had funded is un-funded; what was paid out is a shortfall.
 */
async function reverseOne(db: Database, model: LedgerModel, op: Extract<LedgerOperation, { kind: 'reverse' }>): Promise<void> {
  const credits = (await modelCredits(db, model, ['open', 'held', 'set_aside'])).filter((credit) => credit.account_servicer_reference !== null);
  if (credits.length === 0) {
    count('reverse: no credit');
    return;
  }
  const credit = credits[op.credit % credits.length]!;
  const { outcome } = await importEntries(
    db,
    model,
    [
      {
        amount: credit.amount,
        reference: null,
        direction: 'debit',
        accountServicerReference: credit.account_servicer_reference!,
        ...(op.asReturn ? { returnReason: 'AC04' } : { reversal: true }),
      },
    ],
    'camt.053',
  );
  expectNone('reversals naming their credit not applied', outcome.reversals.applied === 1 ? [] : [outcome.reversals]);
  count(outcome.reversals.shortfall > 0 ? 'reverse: after payout (shortfall)' : 'reverse: before payout');
}

/**
 * Finance writes the payment files of every date the model biller has payouts on (perhaps twice, as a
 * second click would) and downloads each again: the same bytes every time, and a second writing finds
 * nothing new to instruct.
 */
async function writeAndDownloadPaymentFiles(db: Database, model: LedgerModel, twice: boolean): Promise<void> {
  const dates = await db.selectFrom('payouts').select('payout_date').distinct().where('biller_client_id', '=', model.world.biller.clientId).execute();
  if (dates.length === 0) {
    count('paymentFiles: no payout yet');
    return;
  }
  for (const { payout_date: payoutDate } of dates) {
    const written = await createPaymentFiles(db, payoutDate, { actor: cashActor });
    count(written.length > 0 ? 'paymentFiles: written' : 'paymentFiles: nothing new');
    if (twice) {
      const again = await createPaymentFiles(db, payoutDate, { actor: cashActor });
      expectNone('payment files written a second time for the same payouts', again);
    }
    for (const file of written) {
      const first = await paymentFileDownload(db, file.id, 'pain.001');
      const second = await paymentFileDownload(db, file.id, 'pain.001');
      if (Buffer.compare(Buffer.from(first.content), Buffer.from(second.content)) !== 0) throw new LedgerInvariantError(`payment file ${file.id} downloaded with other bytes`);
    }
  }
}

/** A person sets an unmatched credit aside, and perhaps gives it back to the rules. */
async function setAsideOne(db: Database, model: LedgerModel, op: Extract<LedgerOperation, { kind: 'setAside' }>): Promise<void> {
  const credits = (await modelCredits(db, model, ['open', 'held'])).filter((credit) => credit.matched_amount < credit.amount);
  if (credits.length === 0) {
    count('setAside: no unmatched credit');
    return;
  }
  const credit = credits[op.credit % credits.length]!;
  await setCreditAside(db, cashActor, { creditId: credit.id, category: 'other', reason: 'ledger model' });
  count('setAside: set aside');
  if (op.restore) {
    await restoreCredit(db, cashActor, { creditId: credit.id, reason: 'ledger model' });
    count('setAside: restored');
  }
}

/** A person places part of an unmatched credit of the model's statements on one or two open remittances. */
async function matchByHand(db: Database, model: LedgerModel, op: Extract<LedgerOperation, { kind: 'manualMatch' }>): Promise<void> {
  if (model.statementIds.length === 0) {
    count('manualMatch: no statement yet');
    return;
  }
  const credits = await db
    .selectFrom('bank_credits')
    .select(['id', 'amount', 'matched_amount'])
    .where('bank_statement_id', 'in', model.statementIds)
    .where('state', 'in', ['open', 'held'])
    .whereRef('matched_amount', '<', 'amount')
    .orderBy('bank_reference')
    .execute();
  const open = (await modelRemittances(db, model)).filter((remittance) => remittance.received < remittance.expected);
  if (credits.length === 0 || open.length === 0) {
    count(credits.length === 0 ? 'manualMatch: no unmatched credit' : 'manualMatch: no open remittance');
    return;
  }
  const credit = credits[op.credit % credits.length]!;
  const amount = Math.max(1, Math.floor(((credit.amount - credit.matched_amount) * op.percent) / 100));
  const first = open[op.remittance % open.length]!;
  const allocations: Allocation[] = [{ payrollId: first.payroll_id, payDate: first.pay_date, amount }];
  if (op.split && open.length > 1 && amount > 1) {
    const second = open[(op.remittance + 1) % open.length]!;
    allocations[0]!.amount = Math.ceil(amount / 2);
    allocations.push({ payrollId: second.payroll_id, payDate: second.pay_date, amount: Math.floor(amount / 2) });
  }
  await matchCreditManually(db, cashActor, CASH_POLICY, { creditId: credit.id, allocations, reason: 'ledger model' });
  count('manualMatch: matched');
}

/** Everything of the model's cash an unmatch may change: a refused one must leave all of it as it was. */
async function cashState(db: Database, model: LedgerModel) {
  const payrollId = model.world.payroll.id;
  const [remittances, matches, credits, entries] = await Promise.all([
    db.selectFrom('remittances').select(['id', 'received', 'status', 'version']).where('payroll_id', '=', payrollId).orderBy('id').execute(),
    db.selectFrom('remittance_matches').select(['id', 'unmatched_at', 'amount']).where('payroll_id', '=', payrollId).orderBy('id').execute(),
    db
      .selectFrom('bank_credits')
      .select(['id', 'matched_amount'])
      .where('bank_statement_id', 'in', model.statementIds.length > 0 ? model.statementIds : [randomUUID()])
      .orderBy('id')
      .execute(),
    db
      .selectFrom('ledger_entries as le')
      .innerJoin('collection_attempts as ca', 'ca.id', 'le.collection_attempt_id')
      .select(['le.id', 'le.funded_at', 'le.payout_id'])
      .where('ca.payroll_id', '=', payrollId)
      .orderBy('le.id')
      .execute(),
  ]);
  return JSON.stringify({ remittances, matches, credits, entries });
}

/** Takes back a live match of the model's payroll; refused when money already paid out depends on it. */
async function unmatchOne(db: Database, model: LedgerModel, pick: number): Promise<void> {
  const live = await db
    .selectFrom('remittance_matches as m')
    .innerJoin('bank_credits as c', 'c.id', 'm.bank_credit_id')
    .select('m.id')
    .where('m.payroll_id', '=', model.world.payroll.id)
    .where('m.unmatched_at', 'is', null)
    .orderBy('m.matched_at')
    .orderBy('c.bank_reference')
    .orderBy('m.pay_date')
    .orderBy('m.amount')
    .execute();
  if (live.length === 0) {
    count('unmatch: no live match');
    return;
  }
  const before = await cashState(db, model);
  try {
    await unmatch(db, cashActor, CASH_POLICY, { matchId: live[pick % live.length]!.id, reason: 'ledger model' });
    count('unmatch: done');
  } catch (error) {
    if ((error as { code?: string }).code !== 'unmatch-would-unfund-payouts') throw error;
    count('unmatch: refused (would unfund payouts)');
    const after = await cashState(db, model);
    if (after !== before) throw new LedgerInvariantError(`a refused unmatch changed the cash:\nbefore ${before}\nafter  ${after}`);
  }
}

/**
 * Locked pay dates whose remittance is not what the lock and re-runs made it: missing while the current
 * snapshot asks for a payment, more than one, or requesting other than the snapshot asks. With
 * `settled` (everything reconciled, so every report taken in), also one that does not expect what
 * payroll reported, or what was requested where it reported nothing.
 */
async function expectedRemittanceMismatches(db: Database, model: LedgerModel, settled: boolean) {
  const rows = await sql<{
    pay_date: string;
    requested: number | null;
    remittances: number;
    recorded_requested: number | null;
    expected: number | null;
    deducted: number | null;
  }>`
    select to_char(s.pay_date, 'YYYY-MM-DD') as pay_date, rp.payment_amount as requested,
           (select count(*) from remittances all_r where all_r.payroll_id = s.payroll_id and all_r.pay_date = s.pay_date)::int as remittances,
           r.requested as recorded_requested, r.expected,
           (select sum(latest.deduction_amount) from (
              select distinct on (dr.employee_id) dr.deduction_amount from deduction_records dr
              where dr.payroll_id = s.payroll_id and dr.pay_date = s.pay_date and dr.void_id is null
              order by dr.employee_id, dr.version desc) latest)::bigint as deducted
    from deduction_snapshots s
    left join requested_payments rp on rp.snapshot_id = s.id
    left join remittances r on r.payroll_id = s.payroll_id and r.pay_date = s.pay_date
    where s.payroll_id = ${model.world.payroll.id} and s.status <> 'superseded'
  `.execute(db);
  return rows.rows.filter((row) => {
    if (row.requested !== null && row.remittances !== 1) return true;
    if (row.remittances === 0) return false;
    if (row.recorded_requested !== (row.requested ?? 0)) return true;
    return settled && row.expected !== expectedRemittance({ requested: row.requested ?? 0, deducted: row.deducted });
  });
}

/** The cash promises (see the top of this file). */
export async function checkCashInvariants(db: Database, model: LedgerModel): Promise<void> {
  const payrollId = model.world.payroll.id;
  expectNone('locked pay dates without their one expected remittance, or requesting other than their snapshot asks', await expectedRemittanceMismatches(db, model, false));
  const statementIds = model.statementIds.length > 0 ? model.statementIds : [randomUUID()];
  const credits = await sql<{ id: string; amount: number; matched_amount: number; state: string; live: number }>`
    select c.id, c.amount, c.matched_amount, c.state,
           coalesce((select sum(m.amount) from remittance_matches m where m.bank_credit_id = c.id and m.unmatched_at is null), 0)::bigint as live
    from bank_credits c
    where c.bank_statement_id = any(${statementIds}::uuid[])
       or exists (select 1 from remittance_matches m where m.bank_credit_id = c.id and m.payroll_id = ${payrollId})
  `.execute(db);
  expectNone(
    'credits whose matched amount is out of range or not their live matches',
    credits.rows.filter((c) => c.matched_amount < 0 || c.matched_amount > c.amount || Number(c.live) !== c.matched_amount),
  );

  expectNone(
    'credits the bank took back that still pay a remittance',
    credits.rows.filter((c) => c.state === 'reversed' && (Number(c.live) !== 0 || c.matched_amount !== 0)),
  );
  const decisions = await sql<{ id: string; problem: string }>`
    select m.id, 'a rule matched a credit set aside' as problem
    from remittance_matches m join bank_credits c on c.id = m.bank_credit_id
    where m.payroll_id = ${payrollId} and m.unmatched_at is null and m.matched_by = 'rules'
      and c.state = 'set_aside' and m.matched_at > c.state_changed_at
    union all
    select m.id, 'a rule made again a pairing a person took back'
    from remittance_matches m
    where m.payroll_id = ${payrollId} and m.matched_by = 'rules'
      and exists (select 1 from remittance_matches earlier
                  where earlier.bank_credit_id = m.bank_credit_id and earlier.payroll_id = m.payroll_id and earlier.pay_date = m.pay_date
                    -- Strictly before: a reversal's import may match a credit and then take it back in one transaction (one now()).
                    and earlier.unmatched_at is not null and earlier.unmatched_at < m.matched_at and earlier.id <> m.id)
  `.execute(db);
  expectNone("people's decisions undone by the rules", decisions.rows);
  const twice = await sql<{ account_servicer_reference: string; credits: number }>`
    select account_servicer_reference, count(*)::int as credits from bank_credits
    where bank_statement_id = any(${statementIds}::uuid[]) and account_servicer_reference is not null and state <> 'held'
    group by account_servicer_reference having count(*) > 1
  `.execute(db);
  expectNone('credits counted twice (one bank reference, several credits)', twice.rows);

  const remittances = await sql<{ id: string; pay_date: string; expected: number; received: number; shortfall: number; status: string; due_date: string; live: number }>`
    select r.id, to_char(r.pay_date, 'YYYY-MM-DD') as pay_date, r.expected, r.received, r.shortfall, r.status, to_char(r.due_date, 'YYYY-MM-DD') as due_date,
           coalesce((select sum(m.amount) from remittance_matches m
                     where m.payroll_id = r.payroll_id and m.pay_date = r.pay_date and m.unmatched_at is null), 0)::bigint as live
    from remittances r where r.payroll_id = ${payrollId}
  `.execute(db);
  expectNone(
    'remittances whose received is not their live matches, or whose status is not what their figures give',
    remittances.rows.filter((r) => {
      if (Number(r.live) !== r.received || r.received < 0 || r.expected < 0 || r.shortfall < 0) return true;
      return remittanceStatus({ expected: r.expected, received: r.received, dueDate: r.due_date, today: CASH_POLICY.today, shortfall: r.shortfall }) !== r.status;
    }),
  );
  const negative = await db.selectFrom('payouts').select(['id', 'amount']).where('biller_client_id', '=', model.world.biller.clientId).where('amount', '<', 0).execute();
  expectNone('negative payouts', negative);
  // Each payout in one payment file at most, and none written into a file after it had failed or been paid.
  const instructed = await sql<{ payout_id: string; files: number; late: boolean }>`
    select fp.payout_id, count(*)::int as files,
           bool_or(po.status <> 'pending' and coalesce(po.failed_at, po.paid_at) < f.created_at - interval '1 second') as late
    from payment_file_payouts fp join payouts po on po.id = fp.payout_id join payment_files f on f.id = fp.payment_file_id
    where po.biller_client_id = ${model.world.biller.clientId}
    group by fp.payout_id having count(*) > 1 or bool_or(po.status <> 'pending' and coalesce(po.failed_at, po.paid_at) < f.created_at - interval '1 second')
  `.execute(db);
  expectNone('payouts instructed in several payment files, or after they failed or were paid', instructed.rows);

  if (!model.fundedByCash) return;
  // Paid out beyond what was received is only ever what the bank took back after the payout: recorded
  // as the pay date's shortfall (owed back), never a silent loss; and never more than was paid out.
  const payDates = await sql<{ pay_date: string; received: number; shortfall: number; funded: number; paid_out: number; paid_out_gross: number; paid_out_unfunded: number }>`
    select to_char(ca.pay_date, 'YYYY-MM-DD') as pay_date,
           coalesce((select r.received from remittances r where r.payroll_id = ca.payroll_id and r.pay_date = ca.pay_date), 0)::bigint as received,
           coalesce((select r.shortfall from remittances r where r.payroll_id = ca.payroll_id and r.pay_date = ca.pay_date), 0)::bigint as shortfall,
           coalesce(sum(le.amount) filter (where le.funded_at is not null), 0)::bigint as funded,
           coalesce(sum(le.amount) filter (where le.payout_id is not null), 0)::bigint as paid_out,
           coalesce(sum(le.amount) filter (where le.payout_id is not null and le.amount > 0), 0)::bigint as paid_out_gross,
           count(*) filter (where le.payout_id is not null and le.funded_at is null)::bigint as paid_out_unfunded
    from ledger_entries le join collection_attempts ca on ca.id = le.collection_attempt_id
    where ca.payroll_id = ${payrollId}
    group by ca.payroll_id, ca.pay_date
  `.execute(db);
  const rows = payDates.rows.map((row) => ({
    ...row,
    received: Number(row.received),
    shortfall: Number(row.shortfall),
    funded: Number(row.funded),
    paid_out: Number(row.paid_out),
    paid_out_gross: Number(row.paid_out_gross),
    paid_out_unfunded: Number(row.paid_out_unfunded),
  }));
  expectNone(
    'cash-funded pay dates paying out or funding more than was received and recorded as owed back, or paying out unfunded entries',
    rows.filter((row) => row.paid_out > row.received + row.shortfall || row.funded > row.received + row.shortfall || row.paid_out_unfunded > 0),
  );
  expectNone(
    'pay dates owing back more than was ever paid out of them',
    rows.filter((row) => row.shortfall > Math.max(0, row.paid_out_gross - row.received)),
  );
  const paidOut = rows.reduce((total, row) => total + row.paid_out, 0);
  const received = remittances.rows.reduce((total, row) => total + row.received + row.shortfall, 0);
  if (paidOut > received) throw new LedgerInvariantError(`employer paid out ${paidOut}, yet its remittances received ${received} with what is owed back`);
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
  expectNone('pending requests the lock would not find', await findPendingRequestsOffTheLockQueue(db, model.paymentIds));
  await checkEventsAgreeWithPayments(db, model.world.biller.clientId, model.paymentIds);
  await checkCashInvariants(db, model);
}

/** Every version of a payment has one event, and the latest is what GET /payments/{id} answers. */
export async function checkEventsAgreeWithPayments(db: Database, billerClientId: string, paymentIds: readonly string[]): Promise<void> {
  const payments = await db.selectFrom('payment_requests').select(['id', 'status', 'version']).where('id', 'in', paymentIds).execute();
  const events = await db
    .selectFrom('events')
    .select(eventSelection)
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
 * records, once, in date order (as the nightly sweep does), each followed by the pay dates it asks for
 * (as the reconcile job does) until none asks; then the end-state promises, nothing the sweep would
 * still find, and reconciling again writes nothing.
 */
export async function settleAndCheck(db: Database, model: LedgerModel): Promise<void> {
  const locked = PAY_DATES.filter((payDate) => model.lockedPayDates.has(payDate));
  const asked: string[] = [];
  const follow = (summary: ReconciliationSummary) => asked.push(...payDatesToReconcileAfter(summary));
  for (const payDate of locked) follow(await model.world.reconcile(payDate, { final: true, followUp: expectedRemittances }));
  for (let followUps = 0, next = asked.shift(); next !== undefined; followUps += 1, next = asked.shift()) {
    if (followUps > 50) throw new LedgerInvariantError(`follow-up reconciliations did not come to rest: still asked for ${[next, ...asked].join(', ')}`);
    follow(await model.world.reconcile(next, { followUp: expectedRemittances }));
  }
  await checkLedgerInvariants(db, model);
  expectNone('remittances that do not expect what payroll reported, or what was requested before it reported', await expectedRemittanceMismatches(db, model, true));
  const coveredYetOpen = await db
    .selectFrom('payment_requests')
    .select(['id', 'status', 'amount', 'collected_amount', 'target_pay_date'])
    .where('id', 'in', model.paymentIds)
    .where('status', 'in', ['pending', 'instructed'])
    .whereRef('collected_amount', '>=', 'amount')
    .execute();
  expectNone('payments collected in full, yet still pending or instructed once every pay date is reconciled', coveredYetOpen);
  for (const payDate of locked) await checkNothingCountedTwice(db, model, payDate);
  expectNone('pay dates the nightly sweep would find could take more', await findPayDatesThatCanTakeMore(db, PAY_DATES[0], model.world.payroll.id));
  const entries = await ledgerCount(db, model);
  for (const payDate of locked) {
    const summary = await model.world.reconcile(payDate, { final: true, followUp: expectedRemittances });
    const wrote = summary.ledgerEntries + summary.paymentsUpdated + summary.exceptions + summary.exceptionsSuperseded > 0;
    expectNone(`a reconciliation of ${payDate} over the same records wrote`, wrote ? [summary] : []);
  }
  if ((await ledgerCount(db, model)) !== entries) throw new LedgerInvariantError('reconciling again posted ledger entries');
}

/** One scenario from start to end, checking after every operation. */
/** Each operation in turn, with every invariant checked after it. */
export async function applyAndCheck(db: Database, model: LedgerModel, operations: readonly LedgerOperation[]): Promise<void> {
  for (const op of operations) {
    await applyOperation(db, model, op);
    await checkLedgerInvariants(db, model);
  }
}

export async function runLedgerScenario(db: Database, scenario: LedgerScenario): Promise<void> {
  const model = await startScenario(db, scenario.payments, scenario.employerFunding ?? null);
  await checkLedgerInvariants(db, model);
  await applyAndCheck(db, model, scenario.operations);
  await settleAndCheck(db, model);
}

export const ledgerProperty = (db: Database) => fc.asyncProperty(ledgerScenario, (scenario) => runLedgerScenario(db, scenario));
