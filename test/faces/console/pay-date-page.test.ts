import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../../src/platform/money/money-text.ts';
import { queueNames, rerunJobId } from '../../../src/platform/queue/job-catalogue.ts';
import { performRerun } from '../../../src/cycle/reruns/rerun-service.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { signedInAs } from '../../support/console.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { escapeHtml } from '../../../src/faces/console/html.ts';
import { createWorld, PD1, PD2 } from '../../cycle/reconciliation/reconciliation-world.ts';

let t: TestApp;
let payDates: Queue;
beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  payDates = new Queue(queueNames.payDates, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
});
afterAll(async () => {
  await payDates?.close();
  await t?.close();
});

function rowWith(page: string, text: string): string | undefined {
  return page.match(/<tr>[\s\S]*?<\/tr>/g)?.find((row) => row.includes(text));
}

/** Two employees with deductions of 12 550 and 7 000 on PD1, locked into snapshot version 1. */
async function lockedPayDate() {
  const w = await createWorld(t.db, { employees: 2 });
  await w.payment(0, 12_550);
  await w.payment(1, 7_000);
  await w.lock(PD1);
  return { w, path: `/console/payrolls/${w.payroll.id}/pay-dates/${PD1}` };
}

const snapshotsOf = (payrollId: string) =>
  t.db.selectFrom('deduction_snapshots').selectAll().where('payroll_id', '=', payrollId).where('pay_date', '=', PD1).orderBy('snapshot_version').execute();
const rerunsOf = (payrollId: string) => t.db.selectFrom('reruns').selectAll().where('payroll_id', '=', payrollId).execute();

describe('console pay date page', () => {
  it('shows the snapshot version with its employees and total, and serves its instruction file', async () => {
    const { w, path } = await lockedPayDate();
    const [snapshot] = await snapshotsOf(w.payroll.id);
    expect(snapshot).toMatchObject({ snapshot_version: 1, employee_count: 2, total_amount: 19_550 });

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const page = await browser.get(path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<dd>${w.employer.name}</dd>`);
    expect(page.body).toContain(`<dt>Lock date</dt><dd>2026-10-21</dd>`);
    const version = rowWith(page.body, '(current)');
    expect(version).toMatch(/<td>1 <strong>\(current\)<\/strong><\/td>/);
    expect(version).toContain(`<td>${snapshot!.employee_count}</td>`);
    expect(version).toContain(formatMoney(snapshot!.total_amount, 'GBP'));
    expect(version).toContain(`href="${path}/instruction-files/1"`);
    // Viewers read the page but get no re-run form.
    expect(page.body).toContain('Only operators can re-run a pay date.');
    expect(page.body).not.toContain('<textarea');

    const stored = await t.db.selectFrom('instruction_files').selectAll().where('snapshot_id', '=', snapshot!.id).executeTakeFirstOrThrow();
    const download = await browser.get(`${path}/instruction-files/1`);
    expect(download.statusCode).toBe(200);
    expect(download.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(download.headers['content-disposition']).toBe(`attachment; filename="${stored.file_name}"`);
    expect(download.rawPayload.equals(stored.content)).toBe(true);
    expect((await browser.get(`${path}/instruction-files/2`)).statusCode).toBe(404);
    expect((await browser.get(`${path}/instruction-files/x`)).statusCode).toBe(404);
  });

  it('shows the reconciliation: requested against deducted against collected, and the exceptions', async () => {
    const { w, path } = await lockedPayDate();
    // One employee's deduction came back short, the other's not at all.
    await w.push(w.people[0]!.employee.id, PD1, 10_000);
    await w.reconcile(PD1, { final: true });
    const attempts = await t.db.selectFrom('collection_attempts').selectAll().where('payroll_id', '=', w.payroll.id).where('pay_date', '=', PD1).execute();
    const collected = attempts.reduce((sum, attempt) => sum + attempt.collected_amount, 0);
    expect(collected).toBe(10_000);
    const exceptions = await t.db.selectFrom('reconciliation_exceptions').selectAll().where('payroll_id', '=', w.payroll.id).where('superseded_at', 'is', null).execute();
    expect(exceptions.length).toBeGreaterThan(0);

    const { browser } = await signedInAs(t.app, t.db, 'finance');
    const page = await browser.get(path);
    expect(page.statusCode).toBe(200);
    const figures = rowWith(page.body, '<td>GBP</td>');
    expect(figures).toContain(`<td>${attempts.length}</td>`);
    expect(figures).toContain(`<td>${formatMoney(19_550, 'GBP')}</td>`);
    expect(figures).toContain(`<td>${formatMoney(collected, 'GBP')}</td>`);
    expect(page.body).toContain('Deduction records received');
    expect(rowWith(page.body, '<td>push</td>')).toContain('<td>1</td>');
    for (const exception of exceptions) expect(page.body).toContain(exception.detail.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/"/g, '&quot;'));
    // Each exception names its employee and works number, not the employee's id.
    const missing = rowWith(page.body, escapeHtml(exceptions.find((exception) => exception.employee_id === w.people[1]!.employee.id)!.detail));
    const employment = await t.db
      .selectFrom('employments')
      .select('payroll_reference')
      .where('employee_id', '=', w.people[1]!.employee.id)
      .where('payroll_id', '=', w.payroll.id)
      .executeTakeFirstOrThrow();
    expect(missing).toContain(`<td>${w.people[1]!.employee.given_name} ${w.people[1]!.employee.family_name} (${employment.payroll_reference})</td>`);
    expect(missing).not.toContain(w.people[1]!.employee.id);
    const run = await t.db.selectFrom('reconciliation_runs').select('id').where('payroll_id', '=', w.payroll.id).executeTakeFirstOrThrow();
    expect(page.body).toContain(`href="/console/runs/reconciliation/${run.id}"`);
  });

  it("names the provider's client a confirmation came from, not its id", async () => {
    const { w, path } = await lockedPayDate();
    const [snapshot] = await snapshotsOf(w.payroll.id);
    const response = await injectJson(t.app, {
      method: 'POST',
      url: `/deductions/${w.payroll.id}/confirmation`,
      headers: await authHeaders(t.app, w.providerClient),
      body: {
        confirmation: {
          deduction_data_id: snapshot!.id,
          pay_period: '7-2026',
          currency: 'GBP',
          total_amount: 195.5,
          deductions: [
            { employee_id: w.people[0]!.employee.id, deducted_amount: 125.5 },
            { employee_id: w.people[1]!.employee.id, deducted_amount: 70 },
          ],
        },
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const client = await t.db.selectFrom('clients').select('name').where('id', '=', w.providerClient.clientId).executeTakeFirstOrThrow();

    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    const page = await browser.get(path);
    const confirmations = page.body.slice(page.body.indexOf('id="confirmation"'));
    const received = rowWith(confirmations, formatMoney(19_550, 'GBP'));
    expect(received).toContain(`<td>${escapeHtml(client.name)}</td>`);
    expect(received).not.toContain(w.providerClient.clientId);
    expect(page.body).not.toContain(`client ${w.providerClient.clientId}`);
  });

  it("re-runs for an operator: recorded with the reason and the person's email, queued, then version 2 on the re-run and pay date pages", async () => {
    const { w, path } = await lockedPayDate();
    const { browser, user } = await signedInAs(t.app, t.db, 'operator');
    const page = await browser.get(path);
    // The label right above its box: one field of a stacked form (not a flex row that set "Reason" apart from it).
    expect(page.body).toMatch(
      /<form method="post" action="[^"]+\/reruns" class="stacked">[^]*?<div class="field">\s*<label for="rerun-reason">Reason<\/label>\s*<textarea id="rerun-reason" name="reason"[^>]*><\/textarea>\s*<\/div>/,
    );
    expect((await browser.get('/console/assets/console.css')).body).toContain('form.stacked .field { display: grid;');

    const posted = await browser.post(`${path}/reruns`, { reason: 'employer corrected a payroll reference' });
    expect(posted.statusCode).toBe(303);
    const [rerun] = await rerunsOf(w.payroll.id);
    expect(posted.headers.location).toBe(`/console/runs/rerun/${rerun!.id}`);
    const requests = await t.db.selectFrom('rerun_requests').selectAll().where('rerun_id', '=', rerun!.id).execute();
    expect(requests.map((r) => [r.reason, r.requested_by])).toEqual([['employer corrected a payroll reference', user.email]]);
    const audit = await t.db.selectFrom('audit_log').selectAll().where('action', '=', 'rerun.requested').where('resource_id', '=', rerun!.id).execute();
    expect(audit.map((a) => [a.actor_kind, a.actor, a.reason])).toEqual([['console', user.email, 'employer corrected a payroll reference']]);
    const job = await payDates.getJob(rerunJobId(rerun!.id));
    expect(job?.data).toEqual({ rerunId: rerun!.id });

    const progress = await browser.get(`/console/runs/rerun/${rerun!.id}`);
    expect(progress.statusCode).toBe(200);
    expect(progress.body).toContain('<meta http-equiv="refresh" content="2">');
    expect(progress.body).toContain('with its progress and result');
    expect(progress.body).toContain('Re-run requested');
    expect(progress.body).toContain('<a href="?reload=off">Stop reloading</a>');
    const stopped = await browser.get(`/console/runs/rerun/${rerun!.id}?reload=off`);
    expect(stopped.body).not.toContain('http-equiv="refresh"');
    expect(stopped.body).toContain('Check again');
    expect(rowWith(progress.body, 'employer corrected a payroll reference')).toContain(user.email);

    await performRerun(t.db, rerun!.id);
    const done = await browser.get(`/console/runs/rerun/${rerun!.id}`);
    expect(done.body).not.toContain('http-equiv="refresh"');
    expect(done.body).toContain('<dt>New snapshot version</dt><dd>2</dd>');
    expect(done.body).toContain('snapshot version 2 replaces version 1');

    const snapshots = await snapshotsOf(w.payroll.id);
    expect(snapshots.map((s) => [s.snapshot_version, s.status])).toEqual([
      [1, 'superseded'],
      [2, 'locked'],
    ]);
    const after = await browser.get(path);
    expect(rowWith(after.body, '(current)')).toMatch(/<td>2 <strong>\(current\)<\/strong><\/td>/);
    expect(rowWith(after.body, `${path}/instruction-files/1"`)).toContain('superseded');
    expect(after.body).toContain(`href="${path}/instruction-files/2"`);
    expect(rowWith(after.body, 'employer corrected a payroll reference')).toContain('<td>2</td>');
  });

  it('asks an operator to confirm re-running a reconciled pay date, refuses it unconfirmed (409), and shows both lock times after', async () => {
    const { w, path } = await lockedPayDate();
    await w.push(w.people[0]!.employee.id, PD1, 12_550);
    await w.push(w.people[1]!.employee.id, PD1, 7_000);
    await w.reconcile(PD1);
    const { browser } = await signedInAs(t.app, t.db, 'operator');
    const page = await browser.get(path);
    expect(page.body).toContain('This pay date is reconciled: every deduction payroll reported has been allocated to its payment requests.');
    expect(page.body).toMatch(/<input type="checkbox" id="rerun-confirm" name="confirm" value="yes" required aria-describedby="rerun-warning">\s*<label for="rerun-confirm">/);
    const [first] = await snapshotsOf(w.payroll.id);
    const firstLock = `<dt>Locked</dt><dd>${first!.locked_at.toISOString().slice(0, 19).replace('T', ' ')} UTC</dd>`;
    expect(page.body).toContain(firstLock);
    expect(page.body).not.toContain('Locked again by a re-run');

    const unconfirmed = await browser.post(`${path}/reruns`, { reason: 'employer corrected a payroll reference' });
    expect(unconfirmed.statusCode).toBe(409);
    expect(unconfirmed.body).toContain('Tick the box to confirm the re-run');
    expect(unconfirmed.body).toContain('aria-invalid="true"');
    expect(unconfirmed.body).toContain('employer corrected a payroll reference</textarea>');
    expect(await rerunsOf(w.payroll.id)).toEqual([]);

    const confirmed = await browser.post(`${path}/reruns`, { reason: 'employer corrected a payroll reference', confirm: 'yes' });
    expect(confirmed.statusCode).toBe(303);
    const [rerun] = await rerunsOf(w.payroll.id);
    await performRerun(t.db, rerun!.id);
    const [, second] = await snapshotsOf(w.payroll.id);
    const after = await browser.get(path);
    expect(after.body).toContain(firstLock);
    expect(after.body).toContain(`<dt>Locked again by a re-run</dt><dd>${second!.locked_at.toISOString().slice(0, 19).replace('T', ' ')} UTC</dd>`);
    // Version 2 has not been reconciled yet: a re-run of it is a correction again, asked for without confirming.
    expect(after.body).not.toContain('id="rerun-confirm"');
  });

  it('refuses a re-run without a reason (422, the form again) and from finance (403), recording nothing', async () => {
    const { w, path } = await lockedPayDate();
    const operator = (await signedInAs(t.app, t.db, 'operator')).browser;
    await operator.get(path);
    const blank = await operator.post(`${path}/reruns`, { reason: '   ' });
    expect(blank.statusCode).toBe(422);
    expect(blank.body).toContain('a reason is required');
    expect(blank.body).toContain('aria-invalid="true"');
    expect(blank.body).toContain('<textarea id="rerun-reason"');

    const finance = (await signedInAs(t.app, t.db, 'finance')).browser;
    const financePage = await finance.get(path);
    expect(financePage.body).toContain('Only operators can re-run a pay date.');
    const refused = await finance.post(`${path}/reruns`, { reason: 'finance wants it' });
    expect(refused.statusCode).toBe(403);
    expect(await rerunsOf(w.payroll.id)).toEqual([]);
    expect(await t.db.selectFrom('audit_log').select('id').where('action', '=', 'rerun.requested').where('reason', '=', 'finance wants it').execute()).toEqual([]);

    // A pay date not yet locked has nothing to re-run: refused, not a server error.
    const unlocked = await operator.post(`/console/payrolls/${w.payroll.id}/pay-dates/${PD2}/reruns`, { reason: 'too early' });
    expect(unlocked.statusCode).toBe(409);
    expect(await rerunsOf(w.payroll.id)).toEqual([]);
  });

  it('answers 404 for a malformed payroll id or date and an unknown pay date', async () => {
    const { w } = await lockedPayDate();
    const { browser } = await signedInAs(t.app, t.db, 'viewer');
    for (const url of [
      `/console/payrolls/not-a-uuid/pay-dates/${PD1}`,
      `/console/payrolls/${w.payroll.id}/pay-dates/2026-02-30`,
      `/console/payrolls/${w.payroll.id}/pay-dates/yesterday`,
      `/console/payrolls/${crypto.randomUUID()}/pay-dates/${PD1}`,
      `/console/payrolls/${w.payroll.id}/pay-dates/2026-10-31`,
    ]) {
      expect((await browser.get(url)).statusCode, url).toBe(404);
    }
  });
});
