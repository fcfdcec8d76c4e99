import { describe, expect, it } from 'vitest';
import { attentionGauges, attentionKinds, attentionList, attentionSummary, formatAge, payrollLabel, type AttentionFacts } from '../../../src/faces/attention/attention.ts';

// The attention list's rules: every fact becomes one item in names and money, urgent first then
// oldest, counts cover what was not listed, and the metrics' gauges come from the same list.

const NOW = new Date('2026-11-28T08:00:00Z');
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);
const acme = { payroll_id: '11111111-1111-4111-8111-111111111111', employer: 'Acme Ltd', payroll: 'Monthly' };

function noFacts(): AttentionFacts {
  return {
    liveWorkers: 1,
    unanswered: [],
    missedNightly: null,
    failedPayDates: { rows: [], total: 0 },
    stuckRuns: { rows: [], total: 0 },
    failedReconciliations: { rows: [], total: 0 },
    failedPayoutRun: null,
    failedJobs: { rows: [], total: 0 },
    notReadyPayDates: { rows: [], total: 0 },
    unmatchedCredits: { rows: [], total: 0 },
    remittances: { rows: [], totals: {} },
    pendingPayouts: { rows: [], total: 0 },
    failingEndpoints: { rows: [], total: 0 },
  };
}

/** One fact of every kind, each `hours` old by its own clock. */
function everyKind(): AttentionFacts {
  return {
    liveWorkers: 0,
    unanswered: [],
    missedNightly: { run_date: '2026-11-28', due_at: hoursAgo(7) },
    failedPayDates: {
      rows: [{ ...acme, run_id: 'run-1', run_date: '2026-11-27', pay_date: '2026-11-30', failure_reason: 'instruction file could not be written', since: hoursAgo(30) }],
      total: 1,
    },
    stuckRuns: { rows: [{ kind: 'nightly', run_id: 'run-2', date: '2026-11-28', payroll: null, since: hoursAgo(2), started_at: hoursAgo(3) }], total: 1 },
    failedReconciliations: { rows: [{ ...acme, run_id: 'rec-1', pay_date: '2026-10-30', failure_reason: 'deadlock', since: hoursAgo(5) }], total: 1 },
    failedPayoutRun: { run_id: 'pay-1', run_date: '2026-11-27', failure_reason: null, failed_groups: 2, since: hoursAgo(26) },
    failedJobs: {
      rows: [{ queue: 'pay-dates', job_id: 'lock.x', description: 'lock of Acme Ltd: Monthly, pay date 2026-11-30', failed_reason: 'boom', since: hoursAgo(29) }],
      total: 3,
    },
    notReadyPayDates: { rows: [{ ...acme, pay_date: '2026-12-04', lock_date: '2026-11-28', missing: 'the employer has not opted in (pending)' }], total: 1 },
    unmatchedCredits: {
      rows: [
        {
          id: 'credit-1',
          unmatched: 2_500,
          amount: 10_000,
          currency: 'GBP',
          debtor_name: 'Payroll B Ltd',
          remittance_information: 'SDR261231P1',
          booking_date: '2026-11-26',
          state: 'open',
          since: hoursAgo(50),
        },
      ],
      total: 4,
    },
    remittances: {
      rows: [
        {
          ...acme,
          pay_date: '2026-10-30',
          currency: 'GBP',
          status: 'short',
          expected: 11_500,
          received: 10_000,
          shortfall: 0,
          due_date: '2026-11-04',
          payment_reference: 'SDR261030P1',
          since: hoursAgo(40),
        },
        {
          ...acme,
          pay_date: '2026-09-30',
          currency: 'GBP',
          status: 'over',
          expected: 5_000,
          received: 5_100,
          shortfall: 0,
          due_date: '2026-10-05',
          payment_reference: 'SDR260930P1',
          since: hoursAgo(400),
        },
        {
          ...acme,
          pay_date: '2026-11-20',
          currency: 'JPY',
          status: 'late',
          expected: 1_500,
          received: 0,
          shortfall: 0,
          due_date: '2026-11-25',
          payment_reference: 'SDR261120P1',
          since: hoursAgo(80),
        },
        {
          ...acme,
          pay_date: '2026-08-28',
          currency: 'GBP',
          status: 'shortfall',
          expected: 3_000,
          received: 0,
          shortfall: 3_000,
          due_date: '2026-09-02',
          payment_reference: 'SDR260828P1',
          since: hoursAgo(10),
        },
      ],
      totals: { short: 2, over: 1, late: 1, shortfall: 1 },
    },
    pendingPayouts: {
      rows: [
        {
          id: 'payout-1',
          biller: 'Acme Lending',
          amount: 7_500,
          currency: 'GBP',
          payout_date: '2026-11-27',
          reference: 'SDPO261127001',
          payment_file_sequence: 1,
          since: hoursAgo(20),
        },
      ],
      total: 1,
    },
    failingEndpoints: {
      rows: [
        { id: 'endpoint-1', biller: 'Acme Lending', url: 'https://hooks.example/acme', status: 'enabled', disabled_reason: null, pending_deliveries: 3, since: hoursAgo(6) },
      ],
      total: 1,
    },
  };
}

describe('attentionList', () => {
  it('is empty, and says so, when nothing needs anyone', () => {
    const list = attentionList(noFacts(), NOW);
    expect(list.items).toEqual([]);
    expect(Object.values(list.counts).every((count) => count === 0)).toBe(true);
    expect(attentionSummary(list)).toBe('Nothing needs attention.');
  });

  it('lists one item of every kind, in names and money, each with a console link', () => {
    const list = attentionList(everyKind(), NOW);
    expect(new Set(list.items.map((item) => item.kind))).toEqual(new Set(attentionKinds));
    const what = (kind: string) => list.items.filter((item) => item.kind === kind).map((item) => item.what);
    expect(what('credit_unmatched')).toEqual(['Credit not matched: £25.00 of £100.00 from Payroll B Ltd with reference “SDR261231P1”, booked 2026-11-26']);
    expect(what('remittance_short')).toEqual(['Remittance short from Acme Ltd: Monthly, pay date 2026-10-30: £100.00 of £115.00 received, £15.00 still owed']);
    expect(what('remittance_late')).toEqual([
      'Remittance late from Acme Ltd: Monthly, pay date 2026-11-20: 1,500 JPY expected by 2026-11-25, nothing received (reference SDR261120P1)',
    ]);
    expect(what('remittance_over')[0]).toContain('£1.00 too much');
    expect(what('shortfall')[0]).toContain('£30.00 is owed back');
    expect(what('payout_awaiting_bank')).toEqual([
      'Payout SDPO261127001 of £75.00 to Acme Lending, dated 2026-11-27, is waiting for the bank’s answer (in payment file 1 of 2026-11-27)',
    ]);
    expect(what('nightly_run_failed')).toEqual(['The nightly run of 2026-11-27 could not lock Acme Ltd: Monthly, pay date 2026-11-30: instruction file could not be written']);
    expect(what('payout_run_failed')).toEqual(['The payout run of 2026-11-27 could not pay 2 billers']);
    expect(what('webhook_endpoint_failing')).toEqual(['Acme Lending’s webhook endpoint https://hooks.example/acme is failing; 3 deliveries waiting']);
    expect(what('pay_date_not_ready')[0]).toContain('is due to lock on 2026-11-28 but its payroll is not ready: the employer has not opted in (pending)');
    for (const item of list.items) {
      expect(item.href, item.kind).toMatch(/^\/console\//);
      expect(item.what, item.kind).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    }
    const links = Object.fromEntries(list.items.map((item) => [item.kind, item.href]));
    expect(links).toMatchObject({
      credit_unmatched: '/console/cash/credits/credit-1',
      remittance_short: `/console/cash/remittances/${acme.payroll_id}/2026-10-30`,
      payout_awaiting_bank: '/console/payouts/payout-1',
      nightly_run_failed: '/console/runs/nightly/run-1',
      webhook_endpoint_failing: '/console/webhooks/endpoints/endpoint-1',
      job_failed: '/console/jobs',
      reconciliation_run_failed: `/console/payrolls/${acme.payroll_id}/pay-dates/2026-10-30`,
    });
  });

  it('puts urgent items first, then the oldest first', () => {
    const list = attentionList(everyKind(), NOW);
    const urgentEnds = list.items.findIndex((item) => item.urgency !== 'urgent');
    expect(urgentEnds).toBeGreaterThan(0);
    expect(list.items.slice(urgentEnds).every((item) => item.urgency === 'today')).toBe(true);
    for (const part of [list.items.slice(0, urgentEnds), list.items.slice(urgentEnds)]) {
      const times = part.map((item) => item.since.getTime());
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
    // The oldest urgent item: the failed lock of 30 h ago; the oldest of the rest: the over remittance.
    expect(list.items[0]!.kind).toBe('nightly_run_failed');
    expect(list.items[urgentEnds]!.kind).toBe('remittance_over');
  });

  it('counts what it does not list, per kind, and says how many are urgent', () => {
    const list = attentionList(everyKind(), NOW);
    expect(list.counts).toMatchObject({ credit_unmatched: 4, job_failed: 3, remittance_short: 2, remittance_over: 1, worker_not_alive: 1, nightly_not_run: 1 });
    const total = Object.values(list.counts).reduce((a, b) => a + b, 0);
    expect(total).toBe(list.items.length + 3 + 2 + 1);
    // Urgent (what the alert rules page for): no worker, nightly not run, failed lock, stuck run, shortfall.
    expect(attentionSummary(list)).toBe(`${total} things need attention, 5 urgent.`);
  });

  it('does not report a dead worker when workers were not asked, and says when Redis did not answer', () => {
    const notAsked = attentionList({ ...noFacts(), liveWorkers: null }, NOW);
    expect(notAsked.items).toEqual([]);
    const unanswered = attentionList({ ...noFacts(), liveWorkers: null, unanswered: ['workers', 'failed jobs'] }, NOW);
    expect(attentionSummary(unanswered)).toBe('Nothing needs attention. Redis did not answer, so workers and failed jobs are not known.');
  });

  it('words a payout not yet in a payment file, a held credit, a disabled endpoint and a failed payout run', () => {
    const facts = everyKind();
    const list = attentionList(
      {
        ...facts,
        failedPayoutRun: { ...facts.failedPayoutRun!, failure_reason: 'database restarted' },
        pendingPayouts: { rows: [{ ...facts.pendingPayouts.rows[0]!, payment_file_sequence: null }], total: 1 },
        unmatchedCredits: { rows: [{ ...facts.unmatchedCredits.rows[0]!, state: 'held', unmatched: 10_000, debtor_name: null, remittance_information: null }], total: 1 },
        failingEndpoints: { rows: [{ ...facts.failingEndpoints.rows[0]!, status: 'disabled', disabled_reason: 'failing for 3 days', pending_deliveries: 1 }], total: 1 },
      },
      NOW,
    );
    const what = (kind: string) => list.items.find((item) => item.kind === kind)!.what;
    expect(what('payout_run_failed')).toBe('The payout run of 2026-11-27 failed: database restarted');
    expect(what('payout_awaiting_bank')).toContain('(no payment file written yet)');
    expect(what('credit_unmatched')).toBe('Credit held for a person: £100.00 from an unknown payer with no reference, booked 2026-11-26');
    expect(what('webhook_endpoint_failing')).toBe('Acme Lending’s webhook endpoint https://hooks.example/acme is disabled: failing for 3 days; 1 delivery waiting');
  });
});

describe('attentionGauges', () => {
  it('has every kind, with the oldest item’s age in seconds and 0 for a kind with none', () => {
    const gauges = attentionGauges(attentionList(everyKind(), NOW), NOW);
    expect(Object.keys(gauges.items).sort()).toEqual([...attentionKinds].sort());
    expect(gauges.oldestAgeSeconds.credit_unmatched).toBe(50 * 3600);
    expect(gauges.oldestAgeSeconds.remittance_over).toBe(400 * 3600);
    expect(gauges.workersAlive).toBe(0);
    const quiet = attentionGauges(attentionList(noFacts(), NOW), NOW);
    expect(Object.values(quiet.oldestAgeSeconds).every((age) => age === 0)).toBe(true);
    expect(quiet.workersAlive).toBe(1);
  });
});

describe('formatAge', () => {
  it.each([
    [0, 'just now'],
    [59, 'just now'],
    [60, '1 min'],
    [3_599, '59 min'],
    [3_600, '1 h'],
    [47 * 3_600 + 3_599, '47 h'],
    [48 * 3_600, '2 days'],
    [30 * 86_400, '30 days'],
    [-5, 'just now'],
  ])('%i s old reads %s', (seconds, words) => {
    expect(formatAge(new Date(NOW.getTime() - seconds * 1000), NOW)).toBe(words);
  });
});

it('names a payroll by its employer and name', () => {
  expect(payrollLabel(acme)).toBe('Acme Ltd: Monthly');
});
