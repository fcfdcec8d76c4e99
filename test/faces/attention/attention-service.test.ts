import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectAttention, type AttentionSources } from '../../../src/faces/attention/attention-service.ts';
import { attentionGauges, attentionKinds, type AttentionList } from '../../../src/faces/attention/attention.ts';
import { collectStatus, formatStatus } from '../../../src/faces/cli/status-command.ts';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { matchCreditManually } from '../../../src/settlement/cash/matching-service.ts';
import { bringRemittancesUpToDate } from '../../../src/settlement/cash/remittance-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createWorld, PD1, PD2 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { cashPolicy, importCredits, reconciledPayDate } from '../../support/cash.ts';
import { signedInAs } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { failedJob } from '../../support/jobs.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// The attention list read from a real installation: one of (nearly) every kind made the way the
// service makes it, or, for runs that failed or hung, the rows such a run leaves. Then the same list
// in `deductions status`, on the console's overview and in the metrics.

// PD2's lock date, at noon: the 01:00 nightly run of the day has not started, and PD2 is due.
const NOW = new Date('2026-11-18T12:00:00Z');
const hoursAgo = (hours: number) => new Date(NOW.getTime() - hours * 3_600_000);
// The fixtures' reconciliations and payout runs ran on the machine's clock: a failed run that is the
// latest must start after them.
const afterEveryRealRun = () => new Date(Date.now() + 60_000);

let t: TestApp;
let payDates: Queue;
let sources: AttentionSources;
let trusted: Awaited<ReturnType<typeof reconciledPayDate>>;
let owing: Awaited<ReturnType<typeof reconciledPayDate>>;
let notReady: Awaited<ReturnType<typeof createWorld>>;
let credit: string;
let list: AttentionList;

beforeAll(async () => {
  t = await startTestApp();
  payDates = new Queue(queueNames.payDates, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
  sources = {
    db: t.db,
    workers: { redis: t.redis, prefix: t.config.QUEUE_PREFIX },
    queues: async () => [payDates],
    nightlyCron: '0 1 * * *',
    timeZone: 'Europe/London',
  };

  // A trusted employer's pay date, deducted in full (£248.00), paid out before the money came: the
  // payout waits for the bank's answer. The employer then sends £200.00 (short) and an unknown payer £12.34.
  await createCollectionAccount(t.db);
  trusted = await reconciledPayDate(t.db, { trusted: true });
  await runPayouts(t.db, { funding: 'deducted', today: '2026-11-02', settlementDelayWorkingDays: 1, holidays: new Set() });
  const [part, unknown] = await importCredits(
    t.db,
    'ATTENTION-1',
    [
      { amount: 20_000, remittanceInformation: trusted.reference, debtorName: 'Trusted Employer Ltd' },
      { amount: 1_234, remittanceInformation: 'refund 7731', debtorName: 'Mystery Payer' },
    ],
    '2026-11-02',
  );
  credit = unknown!;
  // No rule pays a remittance less than it expects: finance matches the £200.00 by hand.
  await matchCreditManually(t.db, cliActor('finance'), cashPolicy('2026-11-02'), {
    creditId: part!,
    allocations: [{ payrollId: trusted.payroll.id, payDate: PD1, amount: 20_000 }],
    reason: 'employer paid part',
  });

  // Another employer's pay date: nothing has come and the due date has passed (late).
  owing = await reconciledPayDate(t.db);
  await bringRemittancesUpToDate(t.db, cashPolicy('2026-11-18'));

  // A third payroll whose employer has not opted in: PD2 locks today and cannot.
  notReady = await createWorld(t.db, { employees: 1 });
  await t.db.updateTable('employers').set({ salary_deduction_opt_in_status: 'pending' }).where('id', '=', notReady.employer.id).execute();

  // What failed or hung runs leave behind.
  const failedRun = crypto.randomUUID();
  await t.db
    .insertInto('nightly_runs')
    .values({ id: failedRun, run_date: '2026-11-17', trigger: 'schedule', triggered_by: null, pay_dates_due: 1, started_at: hoursAgo(35), finished_at: hoursAgo(34) })
    .execute();
  await t.db
    .insertInto('nightly_run_pay_dates')
    .values({
      run_id: failedRun,
      payroll_id: trusted.payroll.id,
      pay_date: PD2,
      outcome: 'failed',
      failure_reason: 'instruction file could not be stored',
      resolved_at: hoursAgo(34),
    })
    .execute();
  await t.db
    .insertInto('nightly_runs')
    .values({ id: crypto.randomUUID(), run_date: '2026-11-16', trigger: 'manual', triggered_by: 'ops', pay_dates_due: 0, started_at: hoursAgo(3), finished_at: null })
    .execute();
  await t.db
    .insertInto('reconciliation_runs')
    .values({
      id: crypto.randomUUID(),
      payroll_id: owing.payroll.id,
      pay_date: PD1,
      trigger: 'sweep',
      triggered_by: null,
      final: false,
      started_at: afterEveryRealRun(),
      finished_at: afterEveryRealRun(),
      outcome: 'failed',
      failure_reason: 'could not serialize access',
    })
    .execute();
  await t.db
    .insertInto('payout_runs')
    .values({
      id: crypto.randomUUID(),
      run_date: '2026-11-18',
      trigger: 'schedule',
      triggered_by: null,
      settled_through: '2026-11-17',
      started_at: afterEveryRealRun(),
      finished_at: afterEveryRealRun(),
      outcome: 'failed',
      failure_reason: 'connection terminated',
    })
    .execute();
  await failedJob(payDates, t.config.REDIS_URL, 'lock-pay-date', { payrollId: owing.payroll.id, payDate: PD2 }, 'database was restarting');
  await t.db
    .insertInto('webhook_endpoints')
    .values({
      biller_client_id: trusted.biller.clientId,
      url: 'https://hooks.example/attention',
      description: null,
      event_types: [],
      secret: 'sealed',
      failing_since: hoursAgo(4),
    })
    .execute();

  list = await collectAttention(sources, NOW);
}, 120_000);

afterAll(async () => {
  await payDates?.close();
  await t?.close();
});

const whatOf = (kind: string) => list.items.filter((item) => item.kind === kind).map((item) => item.what);
const names = async (world: { payroll: { id: string } }) =>
  t.db
    .selectFrom('payrolls as p')
    .innerJoin('employers as e', 'e.id', 'p.employer_id')
    .select(['p.name as payroll', 'e.name as employer'])
    .where('p.id', '=', world.payroll.id)
    .executeTakeFirstOrThrow()
    .then((row) => `${row.employer}: ${row.payroll}`);

describe('the attention list of an installation', () => {
  it('has an item of every kind made above, and nothing else', () => {
    // Every kind but the two no fixture made: a shortfall, and a remittance paid too much.
    expect(list.items.map((item) => item.kind).sort()).toEqual(attentionKinds.filter((kind) => kind !== 'shortfall' && kind !== 'remittance_over').sort());
  });

  it('names payrolls, billers and payers, and says the money in people’s words', async () => {
    const trustedName = await names(trusted);
    const owingName = await names(owing);
    expect(whatOf('remittance_short')).toEqual([`Remittance short from ${trustedName}, pay date ${PD1}: £200.00 of £248.00 received, £48.00 still owed`]);
    expect(whatOf('credit_unmatched')).toEqual(['Credit not matched: £12.34 from Mystery Payer with reference “refund 7731”, booked 2026-10-30']);
    expect(whatOf('remittance_late')).toEqual([
      `Remittance late from ${owingName}, pay date ${PD1}: £248.00 expected by ${(await t.db.selectFrom('remittances').select('due_date').where('payroll_id', '=', owing.payroll.id).executeTakeFirstOrThrow()).due_date}, nothing received (reference ${owing.reference})`,
    ]);
    expect(whatOf('nightly_run_failed')).toEqual([`The nightly run of 2026-11-17 could not lock ${trustedName}, pay date ${PD2}: instruction file could not be stored`]);
    expect(whatOf('reconciliation_run_failed')).toEqual([`The reconciliation of ${owingName}, pay date ${PD1}, failed: could not serialize access`]);
    expect(whatOf('job_failed')).toEqual([`Job failed for good: lock of ${owingName}, pay date ${PD2}: database was restarting`]);
    expect(whatOf('pay_date_not_ready')).toEqual([
      `${await names(notReady)}, pay date ${PD2}, is due to lock on 2026-11-18 but its payroll is not ready: the employer has not opted in (pending): deductions employers set-opt-in`,
    ]);
    expect(whatOf('nightly_not_run')).toEqual(['The nightly run of 2026-11-18 has not started: it was due 2026-11-18 01:00 UTC and pay dates are due to lock']);
    expect(whatOf('run_stuck')).toEqual(['The nightly run of 2026-11-16 has made no progress since 2026-11-18 09:00 UTC']);
    expect(whatOf('payout_run_failed')).toEqual(['The payout run of 2026-11-18 failed: connection terminated']);
    const biller = (await t.db.selectFrom('clients').select('name').where('id', '=', trusted.biller.clientId).executeTakeFirstOrThrow()).name;
    expect(whatOf('payout_awaiting_bank')).toEqual([
      expect.stringMatching(new RegExp(`^Payout PO\\S+ of £248\\.00 to ${biller}, dated 2026-11-02, is waiting for the bank’s answer \\(no payment file written yet\\)$`)),
    ]);
    expect(whatOf('webhook_endpoint_failing')).toEqual([`${biller}’s webhook endpoint https://hooks.example/attention is failing; 0 deliveries waiting`]);
    expect(list.items.find((item) => item.kind === 'credit_unmatched')!.href).toBe(`/console/cash/credits/${credit}`);
  });

  it('leaves out what is resolved: a locked pay date, a later good run, an opted-in employer', async () => {
    await t.db.updateTable('employers').set({ salary_deduction_opt_in_status: 'opted_in' }).where('id', '=', notReady.employer.id).execute();
    const later = new Date(Date.now() + 120_000);
    await t.db
      .insertInto('payout_runs')
      .values({
        id: crypto.randomUUID(),
        run_date: '2026-11-18',
        trigger: 'cli',
        triggered_by: 'ops',
        settled_through: '2026-11-17',
        started_at: later,
        finished_at: later,
        outcome: 'completed',
        payouts_made: 0,
        failed_groups: 0,
      })
      .execute();
    await t.db
      .updateTable('pay_dates')
      .set({ locked_at: hoursAgo(2) })
      .where('payroll_id', '=', trusted.payroll.id)
      .where('pay_date', '=', PD2)
      .execute();
    try {
      const after = await collectAttention(sources, NOW);
      const kinds = new Set(after.items.map((item) => item.kind));
      for (const gone of ['pay_date_not_ready', 'payout_run_failed', 'nightly_run_failed'] as const) expect(kinds.has(gone), gone).toBe(false);
      expect(kinds.has('credit_unmatched')).toBe(true);
    } finally {
      await t.db.updateTable('employers').set({ salary_deduction_opt_in_status: 'pending' }).where('id', '=', notReady.employer.id).execute();
      await t.db.deleteFrom('payout_runs').where('trigger', '=', 'cli').execute();
      await t.db.updateTable('pay_dates').set({ locked_at: null }).where('payroll_id', '=', trusted.payroll.id).where('pay_date', '=', PD2).execute();
    }
  });

  it('is what deductions status prints first, with the console address of each item', async () => {
    const status = await collectStatus(runtimeOf(t), NOW);
    expect(status.attention.items.map((item) => item.what)).toEqual(list.items.map((item) => item.what));
    expect(status.attention.summary).toBe('13 things need attention, 4 urgent.');
    const text = formatStatus(status).split('\n');
    expect(text[0]).toBe('13 things need attention, 4 urgent.');
    expect(text).toContain(
      `    ${t.config.PUBLIC_BASE_URL.replace(/\/$/, '')}/console/cash/credits/${credit}  or: deductions credits match --credit ${credit} --to PAYROLL:PAY-DATE --amount AMOUNT`,
    );
  });

  it('heads the console overview, each item linked to where it is resolved', async () => {
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const page = await browser.get('/console');
    expect(page.statusCode).toBe(200);
    const section = page.body.slice(page.body.indexOf('<section aria-labelledby="attention"'), page.body.indexOf('</section>'));
    expect(page.body.indexOf('id="attention"')).toBeLessThan(page.body.indexOf('id="last-night"'));
    expect(section).toContain(`<a href="/console/cash/credits/${credit}">Match it or set it aside</a>`);
    expect(section).toContain('Credit not matched: £12.34 from Mystery Payer');
    // The console reads the list as of now, not NOW: one row for each of its items.
    const live = await collectAttention({ ...sources, nightlyCron: t.config.NIGHTLY_CRON, timeZone: t.config.SERVICE_TIME_ZONE });
    expect(section.match(/<tr data-kind=/g)).toHaveLength(live.items.length);
    expect(live.items.length).toBeGreaterThanOrEqual(10);
  });

  it('gives the metrics every kind’s count and oldest age', async () => {
    const gauges = attentionGauges(list, NOW);
    expect(gauges.items).toMatchObject({ credit_unmatched: 1, remittance_short: 1, remittance_late: 1, job_failed: 1, shortfall: 0, remittance_over: 0 });
    expect(gauges.oldestAgeSeconds.nightly_run_failed).toBe(34 * 3600);
    expect(gauges.workersAlive).toBe(0);

    const token = 'attention-metrics-token-0123456789';
    const app = await startTestApp({ env: { METRICS_TOKEN: token } });
    try {
      const scrape = await app.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
      expect(scrape.statusCode).toBe(200);
      // Its own empty database: every kind is exposed, at 0, and the source answered.
      expect(scrape.body).toContain('deductions_attention_items{kind="credit_unmatched"} 0');
      expect(scrape.body).toContain('deductions_attention_oldest_age_seconds{kind="shortfall"} 0');
      expect(scrape.body).toMatch(/deductions_workers_alive \d+/);
      expect(scrape.body).toContain('deductions_metrics_source_up{source="attention"} 1');
    } finally {
      await app.close();
    }
  });
});
