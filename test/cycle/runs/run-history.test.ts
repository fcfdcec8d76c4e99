import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { replaceBeneficiaryAccount } from '../../../src/settlement/payouts/beneficiary-account-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1 } from '../reconciliation/reconciliation-world.ts';

// Every run leaves a row when it starts and finishes it when its work commits: a run killed midway
// stays visibly unfinished, and the retry's own row finishes with the figures.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
});
afterAll(async () => t?.close());

const deductions = (args: string[]) => runDeductions(args, cliEnvOf(t.config));
const reconciliationRunsOf = (payrollId: string) =>
  t.db.selectFrom('reconciliation_runs').selectAll().where('payroll_id', '=', payrollId).orderBy('started_at').orderBy('id').execute();

/** A payroll pay date with one collected deduction of 12 550, locked and reported, ready to reconcile. */
async function reportedPayDate() {
  const w = await createWorld(t.db);
  await w.payment(0, 12_550);
  await w.lock(PD1);
  await w.push(w.people[0]!.employee.id, PD1, 12_550);
  return w;
}

/** Waits (by condition, not by time) until some backend is blocked on the advisory lock `key`, and returns its pid. */
async function backendWaitingOnAdvisoryLock(key: number): Promise<number> {
  for (;;) {
    const waiting = await sql<{ pid: number }>`
      select pid from pg_locks where locktype = 'advisory' and objid = ${key} and not granted
    `.execute(t.db);
    if (waiting.rows[0]) return waiting.rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('reconciliation runs', () => {
  it('leave a completed row with the figures the reconciliation returned', async () => {
    const w = await reportedPayDate();
    const summary = await w.reconcile(PD1, { trigger: 'sweep', final: true });

    const [run] = await reconciliationRunsOf(w.payroll.id);
    expect(run).toMatchObject({
      pay_date: PD1,
      trigger: 'sweep',
      final: true,
      outcome: 'completed',
      failure_reason: null,
      snapshot_id: summary.snapshotId,
      employees: 1,
      collected: 12_550,
      exceptions: summary.exceptions,
      ledger_entries: 1,
      payments_updated: 1,
    });
    expect(run!.finished_at).not.toBeNull();
  });

  it('a run killed midway shows as unfinished, then finished after the retry', async () => {
    const w = await reportedPayDate();
    // Holds the reconciliation inside its transaction, after it has started writing, until the test lets go.
    const key = 915_001;
    await sql`
      create or replace function hold_ledger_write() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock(${sql.lit(key)}); return new; end $$;
      create trigger hold_ledger_write before insert on ledger_entries for each row execute function hold_ledger_write();
    `.execute(t.db);
    try {
      const holder = await t.db.connection().execute(async (connection) => {
        await sql`select pg_advisory_lock(${key})`.execute(connection);
        const killed = w.reconcile(PD1).then(
          () => 'finished',
          (error: Error) => error.message,
        );
        const pid = await backendWaitingOnAdvisoryLock(key);

        const midway = await deductions(['runs', 'list', '--kind', 'reconciliation', '--json']);
        const runsMidway = (JSON.parse(midway.stdout) as { runs: Array<{ id: string; finishedAt: string | null; summary: string; payrollId?: string }> }).runs;
        const unfinished = runsMidway.find((run) => run.payrollId === w.payroll.id);
        expect(unfinished).toMatchObject({ finishedAt: null });
        expect(unfinished!.summary).toMatch(new RegExp(`^${w.employer.name}: ${w.payroll.name}, pay date ${PD1} \\(.*\\): unfinished$`));
        expect(unfinished!.summary).not.toContain(w.payroll.id);
        const text = await deductions(['runs', 'list', '--kind', 'reconciliation']);
        expect(text.stdout.split('\n').find((line) => line.includes(unfinished!.id))).toContain('unfinished');

        await sql`select pg_terminate_backend(${pid})`.execute(connection);
        const outcome = await killed;
        await sql`select pg_advisory_unlock(${key})`.execute(connection);
        return { outcome, runId: unfinished!.id };
      });
      expect(holder.outcome).toMatch(/terminat/);
      await sql`drop trigger hold_ledger_write on ledger_entries`.execute(t.db);

      // Nothing of the killed run's work committed: its row says so, and the retry does the work.
      expect(await t.db.selectFrom('collection_attempts').select('id').where('payroll_id', '=', w.payroll.id).execute()).toEqual([]);
      await w.reconcile(PD1);
      const runs = await reconciliationRunsOf(w.payroll.id);
      expect(runs.map((run) => [run.id === holder.runId, run.outcome, run.collected])).toEqual([
        [true, 'failed', null],
        [false, 'completed', 12_550],
      ]);
      expect(runs[0]!.failure_reason).toMatch(/terminat/);

      const shown = await deductions(['runs', 'show', '--kind', 'reconciliation', '--id', runs[1]!.id, '--json']);
      expect(JSON.parse(shown.stdout)).toMatchObject({ kind: 'reconciliation', id: runs[1]!.id, outcome: 'completed', collected: 12_550 });
    } finally {
      await sql`drop trigger if exists hold_ledger_write on ledger_entries`.execute(t.db);
    }
    // Three `deductions` processes besides the reconciliation: slow on a busy machine.
  }, 90_000);
});

describe('payout runs', () => {
  it('leave a finished row with the payouts made and the totals per currency; a failed group fails the run and the retry finishes it', async () => {
    const w = await reportedPayDate();
    await w.reconcile(PD1);
    await t.db
      .transaction()
      .execute((trx) =>
        replaceBeneficiaryAccount(
          trx,
          w.biller.clientId,
          { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
          { actor: cliActor('fixture'), reason: 'onboarding' },
        ),
      );
    const today = '2099-12-31';
    await sql`
      create or replace function refuse_payout() returns trigger language plpgsql as $$
      begin raise exception 'bank link down'; end $$;
      create trigger refuse_payout before insert on payouts for each row execute function refuse_payout();
    `.execute(t.db);
    let failedRun;
    try {
      failedRun = await runPayouts(t.db, { funding: 'deducted', today, settlementDelayWorkingDays: 1, holidays: new Set(), trigger: 'cli', triggeredBy: 'cli:ops' });
    } finally {
      await sql`drop trigger refuse_payout on payouts`.execute(t.db);
    }
    const retry = await runPayouts(t.db, { funding: 'deducted', today, settlementDelayWorkingDays: 1, holidays: new Set(), trigger: 'schedule' });

    const failed = await t.db.selectFrom('payout_runs').selectAll().where('id', '=', failedRun.runId!).executeTakeFirstOrThrow();
    expect(failed).toMatchObject({ run_date: today, trigger: 'cli', triggered_by: 'cli:ops', outcome: 'failed', failed_groups: 1, payouts_made: 0 });
    expect(failed.failure_reason).toContain('bank link down');
    expect(failed.finished_at).not.toBeNull();

    const finished = await t.db.selectFrom('payout_runs').selectAll().where('id', '=', retry.runId!).executeTakeFirstOrThrow();
    const ours = retry.groups.find((group) => group.billerClientId === w.biller.clientId);
    expect(ours).toMatchObject({ outcome: 'paid_out', amount: 12_550 });
    expect(finished).toMatchObject({ trigger: 'schedule', outcome: 'completed', failed_groups: 0, failure_reason: null });
    expect(finished.payouts_made).toBe(retry.groups.filter((group) => group.outcome === 'paid_out').length);
    expect((finished.totals_by_currency as Record<string, number>).GBP).toBeGreaterThanOrEqual(12_550);

    const shown = await deductions(['runs', 'show', '--kind', 'payout', '--id', retry.runId!, '--json']);
    const payouts = (JSON.parse(shown.stdout) as { payouts: Array<{ id: string; amount: number }> }).payouts;
    const biller = await t.db.selectFrom('clients').select('name').where('id', '=', w.biller.clientId).executeTakeFirstOrThrow();
    // Each payout names its biller; the id stays beside it for support.
    expect(payouts).toContainEqual(
      expect.objectContaining({ id: ours!.outcome === 'paid_out' ? ours!.payoutId : '', amount: 12_550, biller_name: biller.name, biller_client_id: w.biller.clientId }),
    );
  });
});

// Each test starts several `deductions` processes (about a second each when idle): slow on a busy machine.
describe('deductions runs list', { timeout: 90_000 }, () => {
  it('shows every kind of run, newest first', async () => {
    const w = await reportedPayDate();
    await w.reconcile(PD1);
    const rerun = await requestRerun(t.db, {
      payrollId: w.payroll.id,
      payDate: PD1,
      reason: 'employer fixed a payroll reference',
      actor: cliActor('ops@example.com'),
      force: true,
    });
    await performRerun(t.db, rerun.id);
    const nightly = await t.db
      .insertInto('nightly_runs')
      .values({ id: crypto.randomUUID(), run_date: '2026-10-21', trigger: 'manual', triggered_by: 'cli:ops', pay_dates_due: 0, finished_at: sql<Date>`now()` })
      .returning('id')
      .executeTakeFirstOrThrow();
    const payout = await runPayouts(t.db, { funding: 'deducted', today: '2099-12-30', settlementDelayWorkingDays: 1, holidays: new Set() });

    const listed = await deductions(['runs', 'list', '--limit', '200', '--json']);
    expect(listed.code).toBe(0);
    const runs = (JSON.parse(listed.stdout) as { runs: Array<{ kind: string; id: string; startedAt: string }> }).runs;
    expect(new Set(runs.map((run) => run.kind))).toEqual(new Set(['nightly', 'rerun', 'reconciliation', 'payout']));
    expect(runs.map((run) => run.id)).toEqual(expect.arrayContaining([rerun.id, nightly.id, payout.runId]));
    expect(runs.map((run) => run.startedAt)).toEqual([...runs.map((run) => run.startedAt)].sort().reverse());

    const shown = await deductions(['runs', 'show', '--kind', 'rerun', '--id', rerun.id, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      kind: 'rerun',
      id: rerun.id,
      payroll_id: w.payroll.id,
      payroll_name: w.payroll.name,
      employer_name: w.employer.name,
      requests: [expect.objectContaining({ requested_by: 'ops@example.com' })],
    });

    // The lines people read name the payroll as "Employer: Payroll", never by its id.
    const text = await deductions(['runs', 'list', '--limit', '200']);
    const lineOf = (id: string) => text.stdout.split('\n').find((line) => line.includes(id));
    const reconciliation = await t.db.selectFrom('reconciliation_runs').select('id').where('payroll_id', '=', w.payroll.id).orderBy('started_at').executeTakeFirstOrThrow();
    expect(lineOf(reconciliation.id)).toContain(`${w.employer.name}: ${w.payroll.name}, pay date ${PD1} (`);
    expect(lineOf(reconciliation.id)).toContain('1 employees, collected £125.50');
    expect(lineOf(rerun.id)).toContain(`${w.employer.name}: ${w.payroll.name}, pay date ${PD1}: 1 request(s), snapshot version 1 -> 2`);
    expect(text.stdout).not.toContain(`payroll ${w.payroll.id}`);
    const reconciliationText = await deductions(['runs', 'show', '--kind', 'reconciliation', '--id', reconciliation.id]);
    expect(reconciliationText.stdout).toMatch(new RegExp(`payroll_name +${w.payroll.name}\n`));
    expect(reconciliationText.stdout).toMatch(new RegExp(`employer_name +${w.employer.name}\n`));
    const unknown = await deductions(['runs', 'show', '--kind', 'nightly', '--id', crypto.randomUUID()]);
    expect(unknown.code).not.toBe(0);
  });
});

describe('GET /runs', () => {
  it('lets operators list runs and read one; an unknown kind or id is a 404', async () => {
    const w = await reportedPayDate();
    await w.reconcile(PD1, { trigger: 'sweep' });
    const [run] = await reconciliationRunsOf(w.payroll.id);
    const headers = await authHeaders(t.app, await createOperator(t.db));
    const get = (url: string) => injectJson(t.app, { method: 'GET', url, headers });

    const listed = await get('/runs?kind=reconciliation&limit=500');
    expect(listed.statusCode).toBe(200);
    const runs = (listed.json() as { runs: Array<{ kind: string; id: string }> }).runs;
    expect(runs.every((entry) => entry.kind === 'reconciliation')).toBe(true);
    expect(runs.map((entry) => entry.id)).toContain(run!.id);
    // The summary names the payroll; its id is a field of its own.
    expect(runs.find((entry) => entry.id === run!.id)).toMatchObject({
      payrollId: w.payroll.id,
      summary: expect.stringContaining(`${w.employer.name}: ${w.payroll.name}, pay date ${PD1} (sweep)`),
    });

    const shown = await get(`/runs/reconciliation/${run!.id}`);
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toMatchObject({
      kind: 'reconciliation',
      id: run!.id,
      outcome: 'completed',
      collected: 12_550,
      trigger: 'sweep',
      payroll_id: w.payroll.id,
      payroll_name: w.payroll.name,
      employer_name: w.employer.name,
    });

    expect((await get(`/runs/payout/${run!.id}`)).statusCode).toBe(404);
    expect((await get(`/runs/sideways/${run!.id}`)).statusCode).toBe(404);
    expect((await get('/runs/nightly/not-a-uuid')).statusCode).toBe(404);
    expect((await injectJson(t.app, { method: 'GET', url: '/runs' })).statusCode).toBe(401);
  });
});
