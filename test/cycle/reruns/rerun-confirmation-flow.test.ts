import { PassThrough } from 'node:stream';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { performRerun, requestRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { confirmRerunAtTerminal, type Terminal } from '../../../src/faces/cli/deductions-commands.ts';
import { DomainError } from '../../../src/platform/shared/domain-errors.ts';
import { queueNames, rerunJobId } from '../../../src/platform/queue/job-catalogue.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { PD1, PD2 } from '../reconciliation/reconciliation-world.ts';
import { reconciledPayDate } from '../../support/cash.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createCollectionAccount, createOperator } from '../../support/factories.ts';
import { moneyInWordsFaults } from '../../support/money-in-words.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Re-running a pay date whose money has moved (reconciled, or paid out) waits for someone to say so:
// the service refuses without `force`, the API answers 409 with the pay date's state, the command
// line asks at a terminal and otherwise names --force. A re-run keeps the pay date's first lock time.

let t: TestApp;
let operator: Record<string, string>;
let payDates: Queue;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  operator = await authHeaders(t.app, await createOperator(t.db));
  payDates = new Queue(queueNames.payDates, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
});
afterAll(async () => {
  await payDates?.close();
  await t?.close();
});

const rerunsOf = (payrollId: string) => t.db.selectFrom('reruns').selectAll().where('payroll_id', '=', payrollId).execute();
const rerunAudit = (payrollId: string) =>
  t.db
    .selectFrom('audit_log')
    .select(['before', 'after'])
    .where('action', '=', 'rerun.requested')
    .where((eb) => eb('before', '@>', JSON.stringify({ payroll_id: payrollId }) as never))
    .execute();
const payDateRow = (payrollId: string, payDate: string) =>
  t.db.selectFrom('pay_dates').select(['locked_at', 'first_locked_at']).where('payroll_id', '=', payrollId).where('pay_date', '=', payDate).executeTakeFirstOrThrow();

async function refusal(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

const rerunBy = (payrollId: string, payDate: string, body: Record<string, unknown>) =>
  injectJson(t.app, { method: 'POST', url: `/admin/payrolls/${payrollId}/pay-dates/${payDate}/reruns`, headers: operator, body });

describe('re-running a pay date whose money has moved', () => {
  it('re-runs a locked pay date not yet reconciled without asking', async () => {
    const w = await reconciledPayDate(t.db);
    // PD2 holds nothing yet: locking it makes a locked pay date nobody has reported on.
    await w.lock(PD2);
    const recorded = await requestRerun(t.db, { payrollId: w.payroll.id, payDate: PD2, reason: 'employer fixed a reference', actor: cliActor('ops') });
    expect(recorded.payDateState).toBe('locked');
  });

  it('refuses a reconciled pay date without confirmation, recording nothing; confirmed, records it with the confirmation', async () => {
    const w = await reconciledPayDate(t.db);
    const request = { payrollId: w.payroll.id, payDate: PD1, reason: 'employer fixed a reference', actor: cliActor('ops') };
    const refused = await refusal(requestRerun(t.db, request));
    expect(refused.code).toBe('rerun-confirmation-required');
    expect(refused.members).toEqual({ pay_date_state: 'reconciled' });
    expect(refused.detail).toBe(
      `payroll ${w.payroll.id} pay date ${PD1} is reconciled: every deduction payroll reported has been allocated; a re-run would change what payroll is asked for after the money has moved, so it needs confirming`,
    );
    expect(await rerunsOf(w.payroll.id)).toEqual([]);
    expect(await rerunAudit(w.payroll.id)).toEqual([]);

    const recorded = await requestRerun(t.db, { ...request, force: true });
    expect(recorded).toMatchObject({ joined: false, payDateState: 'reconciled' });
    const [audit] = await rerunAudit(w.payroll.id);
    expect(audit).toMatchObject({ before: { pay_date_state: 'reconciled' }, after: { confirmed: true, joined: false } });
  });

  it('calls a pay date paid out once its collections are in a payout, and keeps its first lock time through the re-run', async () => {
    const w = await reconciledPayDate(t.db, { trusted: true });
    const firstLock = await payDateRow(w.payroll.id, PD1);
    expect(firstLock.first_locked_at).toEqual(firstLock.locked_at);
    const run = await runPayouts(t.db, { funding: 'deducted', today: '2026-11-10', settlementDelayWorkingDays: 1, holidays: new Set() });
    expect(run.groups.some((group) => group.outcome === 'paid_out')).toBe(true);

    const request = { payrollId: w.payroll.id, payDate: PD1, reason: 'employer fixed a reference', actor: cliActor('ops') };
    expect((await refusal(requestRerun(t.db, request))).members).toEqual({ pay_date_state: 'paid_out' });
    const recorded = await requestRerun(t.db, { ...request, force: true });
    await performRerun(t.db, recorded.id);

    const after = await payDateRow(w.payroll.id, PD1);
    expect(after.first_locked_at).toEqual(firstLock.first_locked_at);
    expect(after.locked_at!.getTime()).toBeGreaterThan(firstLock.locked_at!.getTime());

    // Both times, in the API's and the command line's views of the calendar.
    const shown = await injectJson(t.app, { method: 'GET', url: `/admin/payrolls/${w.payroll.id}/pay-dates`, headers: operator });
    expect(shown.statusCode).toBe(200);
    expect(shown.json().pay_dates.find((d: { pay_date: string }) => d.pay_date === PD1)).toMatchObject({
      locked: true,
      first_locked_at: firstLock.first_locked_at!.toISOString(),
      locked_at: after.locked_at!.toISOString(),
    });
    const cli = await runDeductions(['calendars', 'show', '--payroll', w.payroll.id], cliEnvOf(t.config));
    expect(cli.stderr).toBe('');
    expect(cli.stdout).toContain(`${PD1}  cut-off`);
    expect(cli.stdout).toContain(`locked ${firstLock.first_locked_at!.toISOString()}, locked again by a re-run ${after.locked_at!.toISOString()}`);
  }, 60_000);
});

describe('POST /admin/payrolls/{payroll_id}/pay-dates/{pay_date}/reruns', () => {
  it('answers 409 with the pay date state unless force is true, then 202 and queues the re-run', async () => {
    const w = await reconciledPayDate(t.db);
    const refused = await rerunBy(w.payroll.id, PD1, { reason: 'employer fixed a reference' });
    expect(refused.statusCode).toBe(409);
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ type: expect.stringMatching(/rerun-confirmation-required$/), status: 409, pay_date_state: 'reconciled' });
    expect(moneyInWordsFaults(refused.json().detail)).toEqual([]);
    expect(await rerunsOf(w.payroll.id)).toEqual([]);

    const accepted = await rerunBy(w.payroll.id, PD1, { reason: 'employer fixed a reference', force: true });
    expect(accepted.statusCode).toBe(202);
    const [rerun] = await rerunsOf(w.payroll.id);
    expect(accepted.json()).toEqual({
      rerun: { id: rerun!.id, request_id: expect.any(String), payroll_id: w.payroll.id, pay_date: PD1, joined: false, pay_date_state: 'reconciled' },
    });
    const job = await payDates.getJob(rerunJobId(rerun!.id));
    expect(job?.data).toEqual({ rerunId: rerun!.id });
  });

  it('answers 409 rerun-refused for a pay date never locked, 404 for an unknown payroll or date, 422 without a reason', async () => {
    const w = await reconciledPayDate(t.db);
    const unlocked = await rerunBy(w.payroll.id, PD2, { reason: 'too early' });
    expect(unlocked.statusCode).toBe(409);
    expect(unlocked.json().type).toMatch(/rerun-refused$/);
    expect((await rerunBy('00000000-0000-7000-8000-000000000000', PD1, { reason: 'x' })).statusCode).toBe(404);
    expect((await rerunBy(w.payroll.id, '2026-02-30', { reason: 'x' })).statusCode).toBe(404);
    expect((await rerunBy(w.payroll.id, '2031-01-01', { reason: 'x' })).statusCode).toBe(404);
    expect((await rerunBy(w.payroll.id, PD1, { reason: '   ', force: true })).statusCode).toBe(422);
    expect(await rerunsOf(w.payroll.id)).toEqual([]);
  });
});

describe('deductions rerun', () => {
  it('refuses a reconciled pay date when no one is at a terminal, naming --force, and records nothing', async () => {
    const w = await reconciledPayDate(t.db);
    const run = await runDeductions(['rerun', '--payroll', w.payroll.id, '--pay-date', PD1, '--reason', 'employer fixed a reference'], cliEnvOf(t.config));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      `payroll ${w.payroll.id} pay date ${PD1} is reconciled: every deduction payroll reported has been allocated; a re-run would change what payroll is asked for after the money has moved, so it needs confirming: run it again with --force to re-run it anyway\n`,
    );
    expect(await rerunsOf(w.payroll.id)).toEqual([]);
  }, 60_000);

  it('re-runs it with --force and says it was confirmed', async () => {
    const w = await reconciledPayDate(t.db);
    const run = await runDeductions(['rerun', '--payroll', w.payroll.id, '--pay-date', PD1, '--reason', 'employer fixed a reference', '--force'], cliEnvOf(t.config));
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('  confirmed: the pay date was reconciled when asked');
    expect(run.stdout).toMatch(/superseded by .* \(version 2\)/);
    expect(run.stdout).toMatch(/instruction file [a-z0-9-]+_[a-z0-9-]+_2026-10-30_v2\.csv/);
  }, 90_000);
});

describe('confirmRerunAtTerminal', () => {
  /** Streams that say they are a terminal, with what the person types. */
  function terminal(typed: string, isTTY = true): Terminal & { shown: () => string } {
    const input = Object.assign(new PassThrough(), { isTTY });
    const output = Object.assign(new PassThrough(), { isTTY });
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    input.end(typed);
    return { input, output, shown: () => shown };
  }

  it('asks, and takes only "yes" for an answer', async () => {
    const yes = terminal('yes\n');
    expect(await confirmRerunAtTerminal('payroll p pay date d is paid out', yes)).toBe(true);
    expect(yes.shown()).toBe('payroll p pay date d is paid out.\nRe-run it anyway? Type yes to confirm: ');
    expect(await confirmRerunAtTerminal('q', terminal(' YES \n'))).toBe(true);
    expect(await confirmRerunAtTerminal('q', terminal('y\n'))).toBe(false);
    expect(await confirmRerunAtTerminal('q', terminal('\n'))).toBe(false);
  });

  it('asks no one when input or output is not a terminal', async () => {
    const piped = terminal('yes\n', false);
    expect(await confirmRerunAtTerminal('q', piped)).toBeNull();
    expect(piped.shown()).toBe('');
  });
});
