import { payrollName } from '../../directory/payrolls/payroll-names.ts';
import { formatMoney } from '../../platform/money/money-text.ts';

// What needs an operator this morning, one rule for every face: the console's overview lists it,
// `deductions status` prints it (and `--check` fails on it), the metrics count it and the alert
// rules page on those counts. Each item says what it is in names and money, how old it is, and
// where it is resolved; the facts come from attention-service.ts.

/** Every kind, in the order the list shows them when two are equally old: what stops money first. */
export const attentionKinds = [
  'worker_not_alive',
  'nightly_not_run',
  'nightly_run_failed',
  'run_stuck',
  'reconciliation_run_failed',
  'payout_run_failed',
  'job_failed',
  'pay_date_not_ready',
  'shortfall',
  'remittance_late',
  'remittance_short',
  'remittance_over',
  'credit_unmatched',
  'payout_awaiting_bank',
  'webhook_endpoint_failing',
] as const;

export type AttentionKind = (typeof attentionKinds)[number];

/**
 * `urgent`: money stops or goes wrong tonight unless someone acts (the alert rules page for these);
 * `today`: someone should look today (the alert rules raise a ticket).
 */
export type AttentionUrgency = 'urgent' | 'today';

/** Each kind's urgency: the alert rules (deploy/prometheus) page for the urgent ones, test/deploy checks they agree. */
export const attentionUrgency: Readonly<Record<AttentionKind, AttentionUrgency>> = {
  worker_not_alive: 'urgent',
  nightly_not_run: 'urgent',
  nightly_run_failed: 'urgent',
  run_stuck: 'urgent',
  reconciliation_run_failed: 'today',
  // Billers wait a day for their money, and the next run pays what settled: someone looks today.
  payout_run_failed: 'today',
  job_failed: 'today',
  // The run skips it and locks it once the payroll is ready: what is missing is office work (an opt-in, an account).
  pay_date_not_ready: 'today',
  shortfall: 'urgent',
  remittance_late: 'today',
  remittance_short: 'today',
  remittance_over: 'today',
  credit_unmatched: 'today',
  payout_awaiting_bank: 'today',
  webhook_endpoint_failing: 'today',
};

export interface AttentionItem {
  kind: AttentionKind;
  urgency: AttentionUrgency;
  /** What it is, in names and money, as a sentence. */
  what: string;
  /** Since when it has needed attention: its age is measured from here. */
  since: Date;
  /** The console page where it is resolved. */
  href: string;
  /** What to do there, as a link's words. */
  action: string;
  /** The command that resolves it or shows more, where there is one. */
  command?: string;
}

/** A kind with more items than the list shows says how many more there are. */
export interface AttentionList {
  items: AttentionItem[];
  /** Items of each kind, including those not listed. */
  counts: Record<AttentionKind, number>;
  /** Each kind's oldest item among those read; absent when there is none. */
  oldest: Partial<Record<AttentionKind, Date>>;
  /** Worker processes alive; null when not asked or not answered. */
  liveWorkers: number | null;
  unanswered: ReadonlyArray<'workers' | 'failed jobs'>;
}

// ---- The facts, as the repository reads them ----

export interface PayrollName {
  payroll_id: string;
  employer: string;
  payroll: string;
}

export interface FailedPayDateFact extends PayrollName {
  run_id: string;
  run_date: string;
  pay_date: string;
  failure_reason: string | null;
  since: Date;
}

export interface StuckRunFact {
  kind: 'nightly' | 'reconciliation';
  run_id: string;
  /** The nightly run's date, or the reconciled pay date. */
  date: string;
  /** The reconciliation's payroll; null for a nightly run. */
  payroll: PayrollName | null;
  /** The last time it made progress (its start when it made none). */
  since: Date;
  started_at: Date;
}

export interface FailedReconciliationFact extends PayrollName {
  run_id: string;
  pay_date: string;
  failure_reason: string | null;
  since: Date;
}

export interface FailedPayoutRunFact {
  run_id: string;
  run_date: string;
  failure_reason: string | null;
  failed_groups: number;
  since: Date;
}

export interface FailedJobFact {
  queue: string;
  job_id: string;
  /** What the job was for, in names ("lock of Acme Ltd: Monthly, pay date 2026-10-31"). */
  description: string;
  failed_reason: string | null;
  since: Date;
}

export interface NotReadyPayDateFact extends PayrollName {
  pay_date: string;
  lock_date: string;
  /** What the payroll still needs, as one sentence. */
  missing: string;
}

export interface CreditFact {
  id: string;
  unmatched: number;
  amount: number;
  currency: string;
  debtor_name: string | null;
  remittance_information: string | null;
  booking_date: string;
  state: 'open' | 'held';
  since: Date;
}

export type AttentionRemittanceStatus = 'short' | 'over' | 'late' | 'shortfall';

const remittanceKinds = [
  ['shortfall', 'shortfall'],
  ['late', 'remittance_late'],
  ['short', 'remittance_short'],
  ['over', 'remittance_over'],
] as const satisfies ReadonlyArray<readonly [AttentionRemittanceStatus, AttentionKind]>;

export interface RemittanceFact extends PayrollName {
  pay_date: string;
  currency: string;
  status: AttentionRemittanceStatus;
  expected: number;
  received: number;
  shortfall: number;
  due_date: string;
  payment_reference: string;
  since: Date;
}

export interface PendingPayoutFact {
  id: string;
  biller: string;
  amount: number;
  currency: string;
  payout_date: string;
  reference: string;
  /** The payment file that instructs it; null when no file has been written yet. */
  payment_file_sequence: number | null;
  since: Date;
}

export interface FailingEndpointFact {
  id: string;
  biller: string;
  url: string;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  pending_deliveries: number;
  since: Date;
}

export interface MissedNightlyFact {
  run_date: string;
  due_at: Date;
}

/** One kind's rows as read: the oldest first, up to the list's limit, and how many there are in all. */
export interface Counted<T> {
  rows: readonly T[];
  total: number;
}

export interface AttentionFacts {
  /** null when it was not asked (a face without Redis); otherwise how many worker processes are alive. */
  liveWorkers: number | null;
  /** What was asked of Redis and not answered in time: unknown, not zero. */
  unanswered: ReadonlyArray<'workers' | 'failed jobs'>;
  /** The latest scheduled nightly run, when it has not started long after it was due and had pay dates to lock. */
  missedNightly: MissedNightlyFact | null;
  failedPayDates: Counted<FailedPayDateFact>;
  stuckRuns: Counted<StuckRunFact>;
  failedReconciliations: Counted<FailedReconciliationFact>;
  failedPayoutRun: FailedPayoutRunFact | null;
  failedJobs: Counted<FailedJobFact>;
  notReadyPayDates: Counted<NotReadyPayDateFact>;
  unmatchedCredits: Counted<CreditFact>;
  /** The oldest remittances of each status, and how many of each there are in all. */
  remittances: { rows: readonly RemittanceFact[]; totals: Partial<Record<AttentionRemittanceStatus, number>> };
  pendingPayouts: Counted<PendingPayoutFact>;
  failingEndpoints: Counted<FailingEndpointFact>;
}

/** Payrolls as people name them everywhere (payrollName). */
export function payrollLabel(payroll: Pick<PayrollName, 'employer' | 'payroll'>): string {
  return payrollName({ employer_name: payroll.employer, payroll_name: payroll.payroll });
}

const payDatePath = (payrollId: string, payDate: string) => `/console/payrolls/${payrollId}/pay-dates/${payDate}`;
const remittancePath = (payrollId: string, payDate: string) => `/console/cash/remittances/${payrollId}/${payDate}`;
const reasonText = (reason: string | null) => (reason ? `: ${reason}` : '');

function remittanceItem(fact: RemittanceFact): AttentionItem {
  const money = (minor: number) => formatMoney(minor, fact.currency);
  const of = `${payrollLabel(fact)}, pay date ${fact.pay_date}`;
  const base = {
    href: remittancePath(fact.payroll_id, fact.pay_date),
    since: fact.since,
    command: `deductions remittances show --payroll ${fact.payroll_id} --pay-date ${fact.pay_date}`,
  };
  switch (fact.status) {
    case 'shortfall':
      return {
        ...base,
        kind: 'shortfall',
        urgency: attentionUrgency.shortfall,
        what: `Shortfall on ${of}: the bank took back money already paid out; ${money(fact.shortfall)} is owed back to the collection account`,
        action: 'See the remittance and its matches',
      };
    case 'late':
      return {
        ...base,
        kind: 'remittance_late',
        urgency: attentionUrgency.remittance_late,
        what: `Remittance late from ${of}: ${money(fact.expected)} expected by ${fact.due_date}, nothing received (reference ${fact.payment_reference})`,
        action: 'See the remittance',
      };
    case 'short':
      return {
        ...base,
        kind: 'remittance_short',
        urgency: attentionUrgency.remittance_short,
        what: `Remittance short from ${of}: ${money(fact.received)} of ${money(fact.expected)} received, ${money(fact.expected - fact.received)} still owed`,
        action: 'See the remittance',
      };
    case 'over':
      return {
        ...base,
        kind: 'remittance_over',
        urgency: attentionUrgency.remittance_over,
        what: `Remittance over from ${of}: ${money(fact.received)} received against ${money(fact.expected)} expected, ${money(fact.received - fact.expected)} too much`,
        action: 'See the remittance and its matches',
      };
  }
}

/**
 * The attention list: every fact as an item, urgent first, then oldest first. `counts` and `oldest`
 * cover every item, also those beyond the rows read.
 */
export function attentionList(facts: AttentionFacts, now: Date): AttentionList {
  const items: AttentionItem[] = [];
  const counts = Object.fromEntries(attentionKinds.map((kind) => [kind, 0])) as Record<AttentionKind, number>;
  const oldest: Partial<Record<AttentionKind, Date>> = {};
  const add = (item: Omit<AttentionItem, 'urgency'>) => {
    items.push({ ...item, urgency: attentionUrgency[item.kind] });
    if (oldest[item.kind] === undefined || item.since < oldest[item.kind]!) oldest[item.kind] = item.since;
  };
  const countAll = (kind: AttentionKind, counted: Counted<unknown>) => {
    counts[kind] += Math.max(counted.total, counted.rows.length);
  };

  if (facts.liveWorkers === 0) {
    counts.worker_not_alive = 1;
    add({
      kind: 'worker_not_alive',
      what: 'No worker is alive: no job is being worked, so tonight’s locks, reconciliations, payouts and webhooks wait',
      since: now,
      href: '/console/queues/',
      action: 'See the queues',
      command: 'deductions work',
    });
  }

  if (facts.missedNightly) {
    counts.nightly_not_run = 1;
    add({
      kind: 'nightly_not_run',
      what: `The nightly run of ${facts.missedNightly.run_date} has not started: it was due ${facts.missedNightly.due_at.toISOString().slice(0, 16).replace('T', ' ')} UTC and pay dates are due to lock`,
      since: facts.missedNightly.due_at,
      href: '/console/runs?kind=nightly',
      action: 'See the nightly runs',
      command: 'deductions nightly',
    });
  }

  countAll('nightly_run_failed', facts.failedPayDates);
  for (const fact of facts.failedPayDates.rows) {
    add({
      kind: 'nightly_run_failed',
      what: `The nightly run of ${fact.run_date} could not lock ${payrollLabel(fact)}, pay date ${fact.pay_date}${reasonText(fact.failure_reason)}`,
      since: fact.since,
      href: `/console/runs/nightly/${fact.run_id}`,
      action: 'Open the run to retry it',
      command: `deductions nightly retry --run ${fact.run_id}`,
    });
  }

  countAll('run_stuck', facts.stuckRuns);
  for (const fact of facts.stuckRuns.rows) {
    const isNightly = fact.kind === 'nightly';
    add({
      kind: 'run_stuck',
      what: isNightly
        ? `The nightly run of ${fact.date} has made no progress since ${fact.since.toISOString().slice(0, 16).replace('T', ' ')} UTC`
        : `The reconciliation of ${fact.payroll ? payrollLabel(fact.payroll) : 'a payroll'}, pay date ${fact.date}, started ${fact.started_at.toISOString().slice(0, 16).replace('T', ' ')} UTC and has not finished`,
      since: fact.since,
      href: isNightly ? `/console/runs/nightly/${fact.run_id}` : `/console/runs/reconciliation/${fact.run_id}`,
      action: isNightly ? 'Open the run to retry it' : 'Open the run',
      ...(isNightly ? { command: `deductions nightly retry --run ${fact.run_id}` } : {}),
    });
  }

  countAll('reconciliation_run_failed', facts.failedReconciliations);
  for (const fact of facts.failedReconciliations.rows) {
    add({
      kind: 'reconciliation_run_failed',
      what: `The reconciliation of ${payrollLabel(fact)}, pay date ${fact.pay_date}, failed${reasonText(fact.failure_reason)}`,
      since: fact.since,
      href: payDatePath(fact.payroll_id, fact.pay_date),
      action: 'Open the pay date',
      command: `deductions runs show --kind reconciliation --id ${fact.run_id}`,
    });
  }

  if (facts.failedPayoutRun) {
    const run = facts.failedPayoutRun;
    counts.payout_run_failed = 1;
    add({
      kind: 'payout_run_failed',
      what:
        run.failure_reason !== null
          ? `The payout run of ${run.run_date} failed${reasonText(run.failure_reason)}`
          : `The payout run of ${run.run_date} could not pay ${run.failed_groups} ${run.failed_groups === 1 ? 'biller' : 'billers'}`,
      since: run.since,
      href: `/console/runs/payout/${run.run_id}`,
      action: 'Open the run',
      command: 'deductions payouts run',
    });
  }

  countAll('job_failed', facts.failedJobs);
  for (const fact of facts.failedJobs.rows) {
    add({
      kind: 'job_failed',
      what: `Job failed for good: ${fact.description}${reasonText(fact.failed_reason)}`,
      since: fact.since,
      href: '/console/jobs',
      action: 'See failed jobs to retry it',
    });
  }

  countAll('pay_date_not_ready', facts.notReadyPayDates);
  for (const fact of facts.notReadyPayDates.rows) {
    add({
      kind: 'pay_date_not_ready',
      what: `${payrollLabel(fact)}, pay date ${fact.pay_date}, is due to lock on ${fact.lock_date} but its payroll is not ready: ${fact.missing}`,
      since: now,
      href: payDatePath(fact.payroll_id, fact.pay_date),
      action: 'Open the pay date',
      command: `deductions payrolls readiness --payroll ${fact.payroll_id}`,
    });
  }

  for (const fact of facts.remittances.rows) add(remittanceItem(fact));
  for (const [status, kind] of remittanceKinds) {
    const listed = facts.remittances.rows.filter((fact) => fact.status === status).length;
    counts[kind] = Math.max(facts.remittances.totals[status] ?? 0, listed);
  }

  countAll('credit_unmatched', facts.unmatchedCredits);
  for (const fact of facts.unmatchedCredits.rows) {
    const from = fact.debtor_name ?? 'an unknown payer';
    const reference = fact.remittance_information ? ` with reference “${fact.remittance_information}”` : ' with no reference';
    const part =
      fact.unmatched === fact.amount ? formatMoney(fact.amount, fact.currency) : `${formatMoney(fact.unmatched, fact.currency)} of ${formatMoney(fact.amount, fact.currency)}`;
    add({
      kind: 'credit_unmatched',
      what: `${fact.state === 'held' ? 'Credit held for a person' : 'Credit not matched'}: ${part} from ${from}${reference}, booked ${fact.booking_date}`,
      since: fact.since,
      href: `/console/cash/credits/${fact.id}`,
      action: 'Match it or set it aside',
      command: `deductions credits match --credit ${fact.id} --to PAYROLL:PAY-DATE --amount AMOUNT`,
    });
  }

  countAll('payout_awaiting_bank', facts.pendingPayouts);
  for (const fact of facts.pendingPayouts.rows) {
    const instructed = fact.payment_file_sequence === null ? 'no payment file written yet' : `in payment file ${fact.payment_file_sequence} of ${fact.payout_date}`;
    add({
      kind: 'payout_awaiting_bank',
      what: `Payout ${fact.reference} of ${formatMoney(fact.amount, fact.currency)} to ${fact.biller}, dated ${fact.payout_date}, is waiting for the bank’s answer (${instructed})`,
      since: fact.since,
      href: `/console/payouts/${fact.id}`,
      action: 'Mark it paid or failed',
      command: `deductions payouts mark-paid --payout ${fact.id}`,
    });
  }

  countAll('webhook_endpoint_failing', facts.failingEndpoints);
  for (const fact of facts.failingEndpoints.rows) {
    const state = fact.status === 'disabled' ? `disabled${reasonText(fact.disabled_reason)}` : 'failing';
    add({
      kind: 'webhook_endpoint_failing',
      what: `${fact.biller}’s webhook endpoint ${fact.url} is ${state}; ${fact.pending_deliveries} ${fact.pending_deliveries === 1 ? 'delivery' : 'deliveries'} waiting`,
      since: fact.since,
      href: `/console/webhooks/endpoints/${fact.id}`,
      action: 'Open the endpoint to redeliver',
    });
  }

  const rank = (kind: AttentionKind) => attentionKinds.indexOf(kind);
  items.sort(
    (a, b) =>
      (a.urgency === b.urgency ? 0 : a.urgency === 'urgent' ? -1 : 1) || a.since.getTime() - b.since.getTime() || rank(a.kind) - rank(b.kind) || a.what.localeCompare(b.what),
  );
  return { items, counts, oldest, liveWorkers: facts.liveWorkers, unanswered: facts.unanswered };
}

/** The figures the metrics expose: every kind's count and the age of its oldest item in seconds (0 when none). */
export function attentionGauges(
  list: AttentionList,
  now: Date,
): { items: Record<AttentionKind, number>; oldestAgeSeconds: Record<AttentionKind, number>; workersAlive: number | null } {
  const oldestAgeSeconds = Object.fromEntries(
    attentionKinds.map((kind) => {
      const since = list.oldest[kind];
      return [kind, since === undefined ? 0 : Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000))];
    }),
  ) as Record<AttentionKind, number>;
  return { items: { ...list.counts }, oldestAgeSeconds, workersAlive: list.liveWorkers };
}

/** How old something is, as people say it: "just now", "12 min", "5 h", "3 days". */
export function formatAge(since: Date, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000));
  if (seconds < 60) return 'just now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  const days = Math.floor(hours / 24);
  return `${days} days`;
}

/** What a kind's items add up to, as a heading would say it. */
export function attentionSummary(list: AttentionList): string {
  const total = Object.values(list.counts).reduce((sum, count) => sum + count, 0);
  const unknown = list.unanswered.length === 0 ? '' : ` Redis did not answer, so ${list.unanswered.join(' and ')} are not known.`;
  if (total === 0) return `Nothing needs attention.${unknown}`;
  const urgent = attentionKinds.filter((kind) => attentionUrgency[kind] === 'urgent').reduce((sum, kind) => sum + list.counts[kind], 0);
  return `${total} ${total === 1 ? 'thing needs' : 'things need'} attention${urgent > 0 ? `, ${urgent} urgent` : ''}.${unknown}`;
}
