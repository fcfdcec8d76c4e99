import { recordAction, type Actor } from '../../platform/audit/audit-service.ts';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { loadHolidays } from '../../directory/calendars/bank-holiday-repository.ts';
import type { HolidayCalendar } from '../../directory/calendars/working-days.ts';
import { settlementCutoff } from './payout-calendar.ts';
import { recordEvents } from '../../platform/events/outbox.ts';
import { ConflictError, InvalidError, NotFoundError } from '../../platform/shared/domain-errors.ts';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Selectable } from 'kysely';
import {
  findActiveBeneficiaryAccount,
  findPayoutAssemblyOfDay,
  findPayoutForUpdate,
  findPayoutOfDay,
  holdOpenPayoutAssembly,
  insertAssembledPayout,
  insertPayoutAssembly,
  listPayoutAssemblies,
  listUnpaidLedgerGroups,
  rowLockPayoutAssembly,
  payOutChunk,
  payoutReferenceTaken,
  releasePayoutEntries,
  releasePayoutFromPayments,
  setPayoutFailed,
  setPayoutPaid,
  sumPayoutItems,
  sumUnpaidLedgerEntries,
  withdrawPayoutAssembly,
  type PaidOutChunk,
  type PayoutGroup,
} from './payout-run-repository.ts';
import { MIN_ENTRIES_PER_PAYOUT_CHUNK, payoutChunkCount } from './payout-chunks.ts';
import { DEFAULT_PAYOUT_CONCURRENCY } from '../../platform/config/config.ts';
import { findPayout } from './payout-repository.ts';
import { toPayoutResource, type PayoutResource, type PayoutRow } from './payout-resource.ts';
import { PAYOUT_LIFECYCLE, type PayoutStatus } from './payout-transitions.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import { timeOrderedUuid } from '../../platform/shared/time-ordered-uuid.ts';
import type { PayoutAssembliesTable, PayoutFunding, PayoutRunTrigger } from '../../platform/db/tables.ts';
import { fundLedgerEntries, type FundingOutcome } from '../cash/funding-service.ts';
import { advisoryLockCash } from '../cash/remittance-repository.ts';
import { reassessPayDatesOfFailedPayout } from '../cash/reversal-service.ts';
import { finishPayoutRun, insertPayoutRun } from './payout-run-history-repository.ts';

export interface PayoutRunOptions {
  /** The payout date: today in the service time zone. */
  today: string;
  /**
   * What makes a collection payable where its employer says nothing (PAYOUT_FUNDING): `received`, its
   * remittance matched on a bank statement, or `deducted`, payroll's report alone.
   */
  funding: PayoutFunding;
  settlementDelayWorkingDays: number;
  holidays: HolidayCalendar;
  /** What started this run, for its row in payout_runs; `direct` when not said. */
  trigger?: PayoutRunTrigger;
  triggeredBy?: string | null;
  /** PAYOUT_CONCURRENCY: transactions the run keeps going at once (chunks and other billers' payouts). */
  concurrency?: number;
  /** The smallest chunk a payout is split into (payoutChunkCount); tests lower it to split small payouts. */
  minEntriesPerChunk?: number;
}

export type PayoutGroupOutcome = PayoutGroup &
  (
    | { outcome: 'paid_out'; payoutId: string; reference: string; amount: number; entries: number; paymentsPaidOut: number }
    /** Net zero or negative: nothing is written, the entries wait for collections to outweigh them. */
    | { outcome: 'carried_over'; net: number; entries: number }
    /** Money is due but the biller has no active beneficiary account in this currency. */
    | { outcome: 'no_beneficiary_account'; net: number; entries: number }
    /** This biller and currency already had their payout today (a repeated or concurrent run). */
    | { outcome: 'already_paid_out_today'; payoutId: string; reference: string }
    | { outcome: 'failed'; error: string }
  );

export interface PayoutRunSummary {
  payoutDate: string;
  /** Entries with a pay date on or before this are settled and may be paid out. */
  settledThrough: string;
  groups: PayoutGroupOutcome[];
  /** Minor units paid out by this run, per currency. */
  totalsByCurrency: Record<string, number>;
  /** The run's row in payout_runs; the daily run's only (a sandbox biller's payout is not a run). */
  runId?: string;
  /** What the run made payable before paying (the daily run's only). */
  funding?: FundingOutcome;
}

// Which pay dates a run pays: those at least the settlement delay old in bank business days, counted
// from the last business day on or before the run's day (payout-calendar.ts).
export { settlementCutoff };

export type PayoutDecision = 'pay' | 'carry_over' | 'no_beneficiary_account';

/**
 * A payout moves money to the biller, so only a positive net becomes one; a net of reversals is held
 * back against future collections rather than claimed from the biller.
 */
export function payoutDecision(net: number, hasBeneficiaryAccount: boolean): PayoutDecision {
  if (net <= 0) return 'carry_over';
  return hasBeneficiaryAccount ? 'pay' : 'no_beneficiary_account';
}

/**
 * 18 characters, the Bacs and Faster Payments reference limit: 'PO', the payout date as YYMMDD and ten
 * hex digits of the payout id, so finance can find the payout from a bank statement line.
 */
export function payoutReference(payoutId: string, payoutDate: string): string {
  const yymmdd = payoutDate.slice(2).replaceAll('-', '');
  return `PO${yymmdd}${payoutId.replaceAll('-', '').slice(0, 10).toUpperCase()}`;
}

// Serialization failures and deadlocks (against reconciliation updating the same payments), and two
// runs finishing payouts of one biller and currency for the same day at once, are cured by running the
// transaction again.
const RETRYABLE_SQLSTATES = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 5;

function isRetryable(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  return (code !== undefined && RETRYABLE_SQLSTATES.has(code)) || (code === '23505' && constraint === 'payouts_biller_client_id_currency_payout_date_key');
}

/** How a run spreads its work: the transactions it keeps going at once, and the smallest chunk worth one. */
interface Assembling {
  /** Runs one transaction when a place is free; shared by every group and chunk of the run. */
  limit: LimitFunction;
  concurrency: number;
  minEntriesPerChunk: number;
}

type Assembly = Selectable<PayoutAssembliesTable>;
type Plan = PayoutGroupOutcome | { outcome: 'assemble'; assembly: Assembly };

/**
 * Decides a group's payout in one snapshot (repeatable read): what it nets, whether it is paid, and in
 * how many chunks it is assembled; then records the assembly with the payout's id reserved. A payout
 * already made that day ends it; an assembly already planned that day (by a run that died, or one
 * running now) is returned to be finished.
 */
async function planPayout(db: Database, group: PayoutGroup, payoutDate: string, cutoff: string, assembling: Assembling): Promise<Plan> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx): Promise<Plan> => {
      // The snapshot is taken as this advisory lock is asked for, before it is granted: the plan's net may miss an
      // unmatch that commits meanwhile. It only decides whether to pay and in how many chunks; what is
      // paid is what the chunks attach, each checked against the rows it writes.
      await advisoryLockCash(trx, 'shared');
      const existing = await findPayoutOfDay(trx, group, payoutDate);
      if (existing) return { ...group, outcome: 'already_paid_out_today', payoutId: existing.id, reference: existing.reference };
      const planned = await findPayoutAssemblyOfDay(trx, group, payoutDate);
      if (planned) return { outcome: 'assemble', assembly: planned };

      const { net, entries } = await sumUnpaidLedgerEntries(trx, group, cutoff);
      const decision = payoutDecision(net, (await findActiveBeneficiaryAccount(trx, group)) !== undefined);
      if (decision === 'carry_over') return { ...group, outcome: 'carried_over', net, entries };
      if (decision === 'no_beneficiary_account') return { ...group, outcome: 'no_beneficiary_account', net, entries };

      const assembly = await insertPayoutAssembly(trx, {
        ...group,
        // Random, unlike the service's other ids (time-ordered-uuid.ts): the reference is made of the id's
        // first ten hex digits, which in a time-ordered id are the clock, so payouts made together would clash.
        payoutId: crypto.randomUUID(),
        payoutDate,
        settledThrough: cutoff,
        chunks: payoutChunkCount(entries, assembling.concurrency, assembling.minEntriesPerChunk),
      });
      // A plan another run committed after this snapshot makes the insert fail (a serialization failure
      // under repeatable read), and the retry finds it above; one this snapshot sees was found already.
      if (!assembly) throw new Error(`payout of ${group.billerClientId} ${group.currency} on ${payoutDate}: planned twice in one snapshot`);
      return { outcome: 'assemble', assembly };
    });
}

const NOTHING_PAID: PaidOutChunk = { net: 0, entries: 0, paymentsPaidOut: 0 };

/**
 * One chunk, in its own transaction. Repeatable read: an entry or a payment it would write that changed
 * after its snapshot (funding an unmatch took back while we waited for the cash advisory lock, a payment
 * reconciliation moved) fails the chunk, which runs again, rather than pay from stale figures. The cash advisory
 * lock, shared, keeps any unmatch out until it commits. A chunk of an assembly already finished (by
 * another run) pays nothing: the finished payout's amount is its items', so nothing may join them.
 */
async function payChunk(db: Database, assembly: Assembly, chunk: number): Promise<PaidOutChunk> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      await advisoryLockCash(trx, 'shared');
      if (!(await holdOpenPayoutAssembly(trx, assembly.payout_id))) return NOTHING_PAID;
      const toPay = {
        payoutId: assembly.payout_id,
        billerClientId: assembly.biller_client_id,
        currency: assembly.currency,
        settledThrough: assembly.settled_through,
      };
      return payOutChunk(trx, toPay, chunk, assembly.chunks);
    });
}

/**
 * The last step, in one transaction under the cash advisory lock: the payout's row, dated `payoutDate` (the day
 * of the run that finishes it, so a payout a dead run left is in that day's bank file, not a file already
 * sent), with the amount its items add up to, the biller's active account and its payout.created event;
 * the assembly is deleted with it. The assembly is withdrawn instead, every effect undone, when it is
 * not to become a payout: what the chunks attached nets to nothing payable (the entries changed after
 * the plan), the biller has no active account any more, or that day already has the group's payout.
 */
async function finishAssembly(db: Database, planned: Assembly, payoutDate: string, paymentsPaidOut: number): Promise<PayoutGroupOutcome> {
  const group = { billerClientId: planned.biller_client_id, currency: planned.currency };
  return db.transaction().execute(async (trx): Promise<PayoutGroupOutcome> => {
    await advisoryLockCash(trx, 'shared');
    const assembly = await rowLockPayoutAssembly(trx, planned.payout_id);
    if (!assembly) {
      // Another run finished it (or withdrew it) while we paid our chunks.
      const made = await findPayout(trx, { billerClientId: group.billerClientId }, planned.payout_id);
      if (made) return { ...group, outcome: 'already_paid_out_today', payoutId: made.id, reference: made.reference };
      return { ...group, outcome: 'carried_over', net: 0, entries: 0 };
    }
    const { net, entries } = await sumPayoutItems(trx, assembly.payout_id);
    const account = await findActiveBeneficiaryAccount(trx, group);
    const decision = payoutDecision(net, account !== undefined);
    const dayTaken = await findPayoutOfDay(trx, group, payoutDate);
    const reference = payoutReference(assembly.payout_id, payoutDate);
    if (decision !== 'pay' || !account || dayTaken || (await payoutReferenceTaken(trx, reference))) {
      await withdrawPayoutAssembly(trx, assembly.payout_id);
      if (dayTaken) return { ...group, outcome: 'already_paid_out_today', payoutId: dayTaken.id, reference: dayTaken.reference };
      if (decision === 'no_beneficiary_account') return { ...group, outcome: 'no_beneficiary_account', net, entries };
      // Net zero or negative, or (one in a trillion) another payout of the day has this reference: the
      // next run plans the entries again, under a new id.
      return { ...group, outcome: 'carried_over', net, entries };
    }
    const payout = await insertAssembledPayout(trx, { ...group, id: assembly.payout_id, amount: net, payoutDate, reference, account });
    await recordEvents(trx, [
      {
        type: 'payout.created',
        billerClientId: payout.biller_client_id,
        resourceType: 'payout',
        resourceId: payout.id,
        data: toPayoutResource(payout),
      },
    ]);
    return { ...group, outcome: 'paid_out', payoutId: payout.id, reference: payout.reference, amount: net, entries, paymentsPaidOut };
  });
}

/**
 * Every chunk of an assembly (those already paid attach nothing), side by side as the limit allows; then
 * its end, dated `payoutDate`.
 */
async function assemble(db: Database, assembly: Assembly, payoutDate: string, assembling: Assembling): Promise<PayoutGroupOutcome> {
  // Every chunk ends, committed or rolled back, before a failure is reported: no run returns while a
  // chunk of its payout is still writing.
  const chunks = await Promise.allSettled(Array.from({ length: assembly.chunks }, (_, chunk) => assembling.limit(() => withRetries(() => payChunk(db, assembly, chunk)))));
  const failure = chunks.find((chunk) => chunk.status === 'rejected');
  if (failure) throw failure.reason;
  const paymentsPaidOut = chunks.reduce((sum, chunk) => sum + (chunk.status === 'fulfilled' ? chunk.value.paymentsPaidOut : 0), 0);
  return assembling.limit(() => withRetries(() => finishAssembly(db, assembly, payoutDate, paymentsPaidOut)));
}

async function payOutGroup(db: Database, group: PayoutGroup, payoutDate: string, cutoff: string, assembling: Assembling): Promise<PayoutGroupOutcome> {
  const plan = await assembling.limit(() => withRetries(() => planPayout(db, group, payoutDate, cutoff, assembling)));
  return plan.outcome === 'assemble' ? assemble(db, plan.assembly, payoutDate, assembling) : plan;
}

async function withRetries<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt + Math.floor(Math.random() * 30)));
    }
  }
}

/** The run's spread of work from its options: PAYOUT_CONCURRENCY transactions at once by default. */
function assemblingOf(options: { concurrency?: number; minEntriesPerChunk?: number }): Assembling {
  const concurrency = options.concurrency ?? DEFAULT_PAYOUT_CONCURRENCY;
  return { limit: pLimit(concurrency), concurrency, minEntriesPerChunk: options.minEntriesPerChunk ?? MIN_ENTRIES_PER_PAYOUT_CHUNK };
}

/**
 * The daily payout: per biller and currency, every unpaid ledger entry whose pay date is settled becomes
 * one payout with a signed item per entry. A large payout is assembled in chunks that run side by side
 * (payout-chunks.ts) and become visible, as a payout, only once all are in. Safe to run again the same
 * day: the unique (biller, currency, payout date) of payouts and of assemblies makes the second run write
 * nothing new, and an assembly a run left unfinished is finished first. One group failing does not stop
 * the others; the summary names it.
 */
export async function runPayouts(db: Database, options: PayoutRunOptions): Promise<PayoutRunSummary> {
  const cutoff = settlementCutoff(options.today, options.settlementDelayWorkingDays, options.holidays);
  const runId = timeOrderedUuid();
  await insertPayoutRun(db, {
    id: runId,
    runDate: options.today,
    trigger: options.trigger ?? 'direct',
    triggeredBy: options.triggeredBy ?? null,
    settledThrough: cutoff,
  });
  let summary: PayoutRunSummary;
  try {
    const funding = await fundLedgerEntries(db, { cutoff, defaultFunding: options.funding });
    summary = { ...(await payOutGroups(db, 'live', options.today, cutoff, options)), funding };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await finishPayoutRun(db, runId, { payoutsMade: 0, failedGroups: 0, totalsByCurrency: {}, groups: [], failureReason: reason });
    throw error;
  }
  const failed = summary.groups.flatMap((group) => (group.outcome === 'failed' ? [group] : []));
  await finishPayoutRun(db, runId, {
    payoutsMade: summary.groups.filter((group) => group.outcome === 'paid_out').length,
    failedGroups: failed.length,
    totalsByCurrency: summary.totalsByCurrency,
    groups: summary.groups,
    failureReason: failed.length === 0 ? null : failed.map((group) => `${group.billerClientId}/${group.currency}: ${group.error}`).join('; '),
  });
  return { ...summary, runId };
}

/**
 * One biller's payout now, as the daily run would make it on `payoutDate` for the entries with pay
 * dates up to `settledThrough`: the sandbox simulation pays its biller this way, since the daily run
 * pays live billers only.
 */
export async function runPayoutsOfBiller(
  db: Database,
  billerClientId: string,
  options: { payoutDate: string; settledThrough: string; funding: PayoutFunding; concurrency?: number },
): Promise<PayoutRunSummary> {
  await fundLedgerEntries(db, { cutoff: options.settledThrough, defaultFunding: options.funding });
  return payOutGroups(db, { billerClientId }, options.payoutDate, options.settledThrough, options);
}

/**
 * Finishes the assemblies other runs left or are still making, then pays every group with settled,
 * funded entries, all side by side within the run's limit. A group's outcome says what happened to it;
 * a failure is caught per group (its assembly, if any, waits for the next run).
 */
export async function payOutGroups(
  db: Database,
  billers: { billerClientId: string } | 'live',
  payoutDate: string,
  cutoff: string,
  options: { concurrency?: number; minEntriesPerChunk?: number },
): Promise<PayoutRunSummary> {
  const assembling = assemblingOf(options);
  const attempt = async (group: PayoutGroup, work: () => Promise<PayoutGroupOutcome>): Promise<PayoutGroupOutcome> => {
    try {
      return await work();
    } catch (error) {
      return { ...group, outcome: 'failed', error: error instanceof Error ? error.message : String(error) };
    }
  };
  // Groups before assemblies: a group missing from the first list because another run's chunks have
  // attached all its entries is then found among the assemblies (or its payout is already made), so
  // no run returns while a payout of its billers is half made.
  const groups = await listUnpaidLedgerGroups(db, cutoff, billers);
  const unfinished = await listPayoutAssemblies(db, billers);
  const resumed = await Promise.all(
    unfinished.map((assembly) => attempt({ billerClientId: assembly.biller_client_id, currency: assembly.currency }, () => assemble(db, assembly, payoutDate, assembling))),
  );
  const resumedPayouts = new Set(resumed.flatMap((outcome) => (outcome.outcome === 'paid_out' || outcome.outcome === 'already_paid_out_today' ? [outcome.payoutId] : [])));
  const paid = await Promise.all(
    groups.map(({ billerClientId, currency }) => {
      const group = { billerClientId, currency };
      return attempt(group, () => payOutGroup(db, group, payoutDate, cutoff, assembling));
    }),
  );
  // A group whose unfinished assembly was just finished (by this run or another) then answers "already
  // paid out" for the same payout: said once.
  const outcomes = [...resumed, ...paid.filter((outcome) => !(outcome.outcome === 'already_paid_out_today' && resumedPayouts.has(outcome.payoutId)))];
  const totalsByCurrency: Record<string, number> = {};
  for (const outcome of outcomes) {
    if (outcome.outcome === 'paid_out') totalsByCurrency[outcome.currency] = (totalsByCurrency[outcome.currency] ?? 0) + outcome.amount;
  }
  return { payoutDate, settledThrough: cutoff, groups: outcomes, totalsByCurrency };
}

/**
 * The days payouts cannot be made on. Payouts are bank transfers, and the banks' clearing (Bacs,
 * Faster Payments settlement) works to the England and Wales bank holidays wherever the payroll is:
 * a Scottish or Northern Irish holiday closes no clearing day. So the settlement delay counts
 * England and Wales working days, with the days operators added for that region.
 */
export async function loadClearingHolidays(db: Executor) {
  return loadHolidays(db, 'england-and-wales');
}

/** The job's and the CLI's entry. */
export async function runPayoutsOn(db: Database, options: Omit<PayoutRunOptions, 'holidays'>): Promise<PayoutRunSummary> {
  return runPayouts(db, { ...options, holidays: await loadClearingHolidays(db) });
}

// Marking payouts from the bank's answer ---------------------------------------------------------------

/** A payout is settled once: the bank either made the transfer or did not. */
export function canSettlePayout(from: PayoutStatus, to: 'paid' | 'failed'): boolean {
  return PAYOUT_LIFECYCLE.can(from, to);
}

async function payoutToSettle(trx: Executor, payoutId: string, to: 'paid' | 'failed', mode: { sandbox: boolean }): Promise<PayoutRow> {
  const payout = isUuid(payoutId) ? await findPayoutForUpdate(trx, payoutId, mode) : undefined;
  if (!payout) throw new NotFoundError(`Payout ${payoutId}`);
  if (!canSettlePayout(payout.status, to)) {
    throw new ConflictError('payout-not-pending', `Payout ${payoutId} is ${payout.status}; only a pending payout can be marked ${to}`, {
      members: { payout_status: payout.status },
    });
  }
  return payout;
}

/** Who records the bank's answer, and why (required for a failure, which makes the money due again). */
export interface PayoutSettlement {
  actor: Actor;
  reason?: string | null;
  /** The service's day, for the status of a remittance whose shortfall a failure clears (UTC's day when not given). */
  today?: string;
}

/** What the audit record keeps of a payout: enough to see what a mistaken mark changed. */
function payoutSummary(payout: PayoutRow) {
  return {
    status: payout.status,
    amount: payout.amount,
    currency: payout.currency,
    reference: payout.reference,
    biller_client_id: payout.biller_client_id,
    version: payout.version,
  };
}

/**
 * The bank made the transfer. Operators record it for live payouts only: a sandbox biller's payout
 * is simulated money, not live data, and is not found here (see markSandboxPayoutPaid).
 */
export async function markPayoutPaid(trx: Executor, payoutId: string, settlement: PayoutSettlement): Promise<PayoutResource> {
  return markPaid(trx, payoutId, settlement, { sandbox: false });
}

/** The sandbox simulation's own settlement of the payouts it made: only a sandbox biller's payout. */
export async function markSandboxPayoutPaid(trx: Executor, payoutId: string, settlement: PayoutSettlement): Promise<PayoutResource> {
  return markPaid(trx, payoutId, settlement, { sandbox: true });
}

async function markPaid(trx: Executor, payoutId: string, settlement: PayoutSettlement, mode: { sandbox: boolean }): Promise<PayoutResource> {
  const before = await payoutToSettle(trx, payoutId, 'paid', mode);
  const paid = await setPayoutPaid(trx, payoutId);
  await recordAction(trx, {
    actor: settlement.actor,
    action: 'payout.marked_paid',
    resourceType: 'payout',
    resourceId: paid.id,
    reason: settlement.reason ?? null,
    before: payoutSummary(before),
    after: payoutSummary(paid),
  });
  return toPayoutResource(paid);
}

/**
 * The bank rejected the transfer: the payout's entries go back to the unpaid pool and its payments'
 * paid-out amounts come back down (paid_out -> collected), so the next run pays them again. That
 * makes the money due a second time, so it takes a reason, and the record says who gave it. Live
 * payouts only: a sandbox biller's payout is not found here (the simulation only ever pays).
 *
 * The failed payout itself is never instructed again: it stays in the payment file it was sent in (if
 * any), and no new file takes it (only pending payouts are filed). Its money is paid by a new payout,
 * with a new id and reference (the transfer's EndToEndId), in a file of that payout's own date.
 */
export async function markPayoutFailed(trx: Executor, payoutId: string, settlement: PayoutSettlement): Promise<PayoutResource> {
  const reason = settlement.reason?.trim() ?? '';
  if (reason === '') {
    throw new InvalidError('reason-required', 'Marking a payout failed needs the reason', { errors: [{ pointer: '/reason', detail: 'is required' }] });
  }
  // Cash first, as every other mover of funding takes it: the failure changes what its pay dates have paid out.
  await advisoryLockCash(trx, 'exclusive');
  const before = await payoutToSettle(trx, payoutId, 'failed', { sandbox: false });
  const paymentsReleased = await releasePayoutFromPayments(trx, payoutId);
  const entriesReleased = await releasePayoutEntries(trx, payoutId);
  const failed = await setPayoutFailed(trx, payoutId, reason);
  await reassessPayDatesOfFailedPayout(trx, payoutId, settlement.today ?? new Date().toISOString().slice(0, 10));
  await recordAction(trx, {
    actor: settlement.actor,
    action: 'payout.marked_failed',
    resourceType: 'payout',
    resourceId: failed.id,
    reason,
    before: payoutSummary(before),
    after: { ...payoutSummary(failed), entries_released: entriesReleased, payments_released: paymentsReleased },
  });
  return toPayoutResource(failed);
}
