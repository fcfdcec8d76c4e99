import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { knownProblem } from '../../../src/faces/http/plugins/errors.ts';
import { replaceBeneficiaryAccount } from '../../../src/settlement/payouts/beneficiary-account-service.ts';
import { markPayoutFailed, runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { createBiller, createCollectionAttemptRow, createEmploymentWorld, createMandateRow, createOperator, createPaymentRequestRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';

// Marking a payout paid or failed moves money (a failure makes it due again), so each mark must say
// who made it and why, in the same transaction. So must a change to where a biller is paid, and that
// change must keep the account it replaced.

let t: TestApp;
let operator: IssuedCredentials;
let operatorHeaders: Record<string, string>;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;

beforeAll(async () => {
  t = await startTestApp();
  world = await createEmploymentWorld(t.db);
  operator = await createOperator(t.db);
  operatorHeaders = await authHeaders(t.app, operator);
});
afterAll(async () => t?.close());

const deductions = (args: string[]) => runDeductions(args, cliEnvOf(t.config));

/** A biller with an account, a collected payment whose ledger entry is settled, and today's pending payout of it. */
async function pendingPayout(amount = 4200) {
  const biller = await createBiller(t.db);
  await t.db
    .transaction()
    .execute((trx) =>
      replaceBeneficiaryAccount(
        trx,
        biller.clientId,
        { currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' },
        { actor: cliActor('fixture'), reason: 'onboarding' },
      ),
    );
  const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id });
  const payment = await createPaymentRequestRow(t.db, { mandate, status: 'collected', amount });
  await t.db.updateTable('payment_requests').set({ collected_amount: amount }).where('id', '=', payment.id).execute();
  const attempt = await createCollectionAttemptRow(t.db, payment, {
    pay_date: payment.target_pay_date,
    attempt_number: 1,
    requested_amount: amount,
    deducted_amount: amount,
    collected_amount: amount,
    outcome: 'collected',
  });
  await t.db
    .insertInto('ledger_entries')
    .values({
      biller_client_id: biller.clientId,
      payment_request_id: payment.id,
      collection_attempt_id: attempt.id,
      revision: 0,
      kind: 'payment_collected',
      amount,
      currency: 'GBP',
      pay_date: payment.target_pay_date,
    })
    .execute();
  // Far enough after the pay date that it is settled, whatever the calendar. A run made at the same
  // time for another test's biller may be the one that pays this biller out: either way, one payout.
  await runPayouts(t.db, { funding: 'deducted', today: '2030-06-03', settlementDelayWorkingDays: 1, holidays: new Set() });
  const payout = await t.db.selectFrom('payouts').select(['id', 'status']).where('biller_client_id', '=', biller.clientId).executeTakeFirstOrThrow();
  expect(payout.status).toBe('pending');
  return { biller, payoutId: payout.id, paymentId: payment.id };
}

const auditOf = (resourceId: string) => t.db.selectFrom('audit_log').selectAll().where('resource_id', '=', resourceId).orderBy('at').orderBy('id').execute();

const mark = (payoutId: string, outcome: 'paid' | 'failed', body?: object) =>
  injectJson(t.app, { method: 'POST', url: `/payouts/${payoutId}/${outcome}`, headers: operatorHeaders, ...(body === undefined ? {} : { body }) });

describe('marking a payout through the API', () => {
  it('records the operator as the actor of marking paid, with the payout before and after', async () => {
    const { payoutId } = await pendingPayout();
    const response = await mark(payoutId, 'paid');
    expect(response.statusCode, response.body).toBe(200);

    const [entry, ...more] = await auditOf(payoutId);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      actor_kind: 'client',
      actor: operator.clientId,
      action: 'payout.marked_paid',
      resource_type: 'payout',
      reason: null,
      before: expect.objectContaining({ status: 'pending', amount: 4200, currency: 'GBP', version: 1 }),
      after: expect.objectContaining({ status: 'paid', amount: 4200, version: 2 }),
    });
  });

  it('records the reason given to marking paid, like the CLI --reason; the call without a body, or with {}, records none', async () => {
    const { payoutId } = await pendingPayout();
    const response = await mark(payoutId, 'paid', { reason: '  statement line 2026-12-02 #91 ' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().payout.status).toBe('paid');
    expect(await auditOf(payoutId)).toEqual([
      expect.objectContaining({ actor_kind: 'client', actor: operator.clientId, action: 'payout.marked_paid', reason: 'statement line 2026-12-02 #91' }),
    ]);

    const empty = await pendingPayout();
    expect((await mark(empty.payoutId, 'paid', {})).statusCode).toBe(200);
    expect(await auditOf(empty.payoutId)).toEqual([expect.objectContaining({ action: 'payout.marked_paid', reason: null })]);
  });

  it('refuses a paid mark whose body is not the documented one, and nothing changes or is recorded', async () => {
    const { payoutId } = await pendingPayout();
    for (const body of [{ reason: '' }, { reason: 42 }, { reason: 'x'.repeat(501) }, { reason: 'ok', note: 'unknown field' }]) {
      const response = await mark(payoutId, 'paid', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    const text = await t.app.inject({
      method: 'POST',
      url: `/payouts/${payoutId}/paid`,
      headers: { ...operatorHeaders, 'content-type': 'text/plain' },
      payload: 'paid, statement line 7',
    });
    expect(text.statusCode).toBe(415);
    expect((await t.db.selectFrom('payouts').select('status').where('id', '=', payoutId).executeTakeFirstOrThrow()).status).toBe('pending');
    expect(await auditOf(payoutId)).toEqual([]);
  });

  it('documents the optional body of marking paid in the OpenAPI document', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = document.paths['/payouts/{payout_id}/paid'].post;
    expect(operation.requestBody.required).toBe(false);
    const schema = operation.requestBody.content['application/json'].schema;
    const resolved = schema.$ref ? document.components.schemas[schema.$ref.slice('#/components/schemas/'.length)] : schema;
    expect(resolved).toMatchObject({ type: 'object', properties: { reason: expect.objectContaining({ type: 'string', maxLength: 500 }) } });
    expect(resolved.required ?? []).not.toContain('reason');
    // The failed mark's body stays required.
    expect(document.paths['/payouts/{payout_id}/failed'].post.requestBody.required).toBe(true);
  });

  it('records the operator and the reason of marking failed, and how much became due again', async () => {
    const { payoutId, paymentId } = await pendingPayout(3100);
    const response = await mark(payoutId, 'failed', { reason: 'Beneficiary account closed (bank return code AC04)' });
    expect(response.statusCode, response.body).toBe(200);

    const [entry, ...more] = await auditOf(payoutId);
    expect(more).toEqual([]);
    expect(entry).toMatchObject({
      actor_kind: 'client',
      actor: operator.clientId,
      action: 'payout.marked_failed',
      reason: 'Beneficiary account closed (bank return code AC04)',
      before: expect.objectContaining({ status: 'pending', amount: 3100 }),
      after: expect.objectContaining({ status: 'failed', entries_released: 1, payments_released: 1 }),
    });
    const payment = await t.db.selectFrom('payment_requests').select(['status', 'paid_out_amount']).where('id', '=', paymentId).executeTakeFirstOrThrow();
    expect(payment).toEqual({ status: 'collected', paid_out_amount: 0 });
  });

  it('refuses to mark failed without a reason (absent, empty or blank), and nothing changes or is recorded', async () => {
    const { payoutId } = await pendingPayout();
    for (const body of [{}, { reason: '' }, { reason: '   ' }]) {
      const response = await mark(payoutId, 'failed', body);
      expect(response.statusCode, JSON.stringify(body)).toBe(422);
      expect(response.json().errors).toEqual([expect.objectContaining({ pointer: '/reason' })]);
    }
    const bodyless = await injectJson(t.app, { method: 'POST', url: `/payouts/${payoutId}/failed`, headers: operatorHeaders });
    expect([415, 422]).toContain(bodyless.statusCode);

    const payout = await t.db.selectFrom('payouts').select('status').where('id', '=', payoutId).executeTakeFirstOrThrow();
    expect(payout.status).toBe('pending');
    expect(await auditOf(payoutId)).toEqual([]);
  });

  it('refuses a failure without a reason in the service too, whoever calls it', async () => {
    const { payoutId } = await pendingPayout();
    const refused = await t.db
      .transaction()
      .execute((trx) => markPayoutFailed(trx, payoutId, { actor: cliActor('someone'), reason: ' ' }))
      .catch((error: unknown) => error);
    expect(knownProblem(refused)).toMatchObject({ status: 422, slug: 'reason-required' });
    expect(await auditOf(payoutId)).toEqual([]);
  });

  it('records nothing for a refused mark (a payout already settled)', async () => {
    const { payoutId } = await pendingPayout();
    expect((await mark(payoutId, 'paid')).statusCode).toBe(200);
    expect((await mark(payoutId, 'failed', { reason: 'second thoughts' })).statusCode).toBe(409);
    expect((await auditOf(payoutId)).map((entry) => entry.action)).toEqual(['payout.marked_paid']);
  });
});

describe('the audit log', () => {
  it('is append-only: rows cannot be changed or removed', async () => {
    const { payoutId } = await pendingPayout();
    await mark(payoutId, 'paid');
    await expect(sql`update audit_log set actor = 'nobody' where resource_id = ${payoutId}`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_log where resource_id = ${payoutId}`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_log`.execute(t.db)).rejects.toThrow(/append-only/);
    expect(await auditOf(payoutId)).toEqual([expect.objectContaining({ actor: operator.clientId })]);
  });
});

describe("a biller's beneficiary account history", () => {
  it('replaces an account by deactivating it and adding a new one, audited; the next payout goes to the new one', async () => {
    const biller = await createBiller(t.db);
    const replace = (accountNumber: string, reason: string) =>
      t.db
        .transaction()
        .execute((trx) =>
          replaceBeneficiaryAccount(
            trx,
            biller.clientId,
            { currency: 'GBP', account_number: accountNumber, sort_code: '20-00-00', account_holder_name: 'Northwind Credit Union' },
            { actor: cliActor('alice'), reason },
          ),
        );
    const first = await replace('02022222', 'onboarding form 17');
    expect(first.previous).toBeUndefined();
    const second = await replace('00364444', 'change of bank, signed letter 2026-11-20');
    expect(second.previous).toMatchObject({ id: first.current.id, active: false, deactivated_at: expect.any(Date) });

    const rows = await t.db.selectFrom('beneficiary_accounts').selectAll().where('biller_client_id', '=', biller.clientId).orderBy('created_at').execute();
    expect(rows.map((row) => [row.account_number, row.active])).toEqual([
      ['02022222', false],
      ['00364444', true],
    ]);

    const trail = await auditOf(biller.clientId);
    expect(trail.map((entry) => [entry.action, entry.actor_kind, entry.actor, entry.reason])).toEqual([
      ['beneficiary_account.replaced', 'cli', 'alice', 'onboarding form 17'],
      ['beneficiary_account.replaced', 'cli', 'alice', 'change of bank, signed letter 2026-11-20'],
    ]);
    expect(trail[1]).toMatchObject({
      before: { account_id: first.current.id, account_number: '****2222' },
      after: { account_id: second.current.id, account_number: '****4444', sort_code: '20-00-00' },
    });
    // The audit record tells the accounts apart without holding a number to pay into.
    expect(JSON.stringify(trail)).not.toContain('02022222');
  });

  it('refuses to overwrite, reactivate or delete an account row, whoever writes to the table', async () => {
    const biller = await createBiller(t.db);
    const { current } = await t.db
      .transaction()
      .execute((trx) =>
        replaceBeneficiaryAccount(
          trx,
          biller.clientId,
          { currency: 'GBP', account_number: '55556651', sort_code: '40-11-22', account_holder_name: 'Acme Lending Ltd' },
          { actor: cliActor('bob'), reason: 'onboarding' },
        ),
      );
    const change = (set: Record<string, unknown>) => t.db.updateTable('beneficiary_accounts').set(set).where('id', '=', current.id).execute();
    await expect(change({ account_number: '99999999' })).rejects.toThrow(/is history/);
    await expect(change({ sort_code: '11-11-11' })).rejects.toThrow(/is history/);
    await expect(change({ account_holder_name: 'Someone Else' })).rejects.toThrow(/is history/);
    await expect(t.db.deleteFrom('beneficiary_accounts').where('id', '=', current.id).execute()).rejects.toThrow(/is history/);
    await change({ active: false, deactivated_at: new Date() });
    await expect(change({ active: true, deactivated_at: null })).rejects.toThrow(/is history/);
    const row = await t.db.selectFrom('beneficiary_accounts').selectAll().where('id', '=', current.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ account_number: '55556651', sort_code: '40-11-22', active: false });
  });

  it('refuses a replacement without a reason, for a client that is not a biller, or with an invalid account', async () => {
    const biller = await createBiller(t.db);
    const attempt = (clientId: string, account: { account_number: string; sort_code: string }, reason: string) =>
      t.db
        .transaction()
        .execute((trx) => replaceBeneficiaryAccount(trx, clientId, { currency: 'GBP', account_holder_name: 'X Ltd', ...account }, { actor: cliActor('carol'), reason }))
        .catch((error: unknown) => error);
    const good = { account_number: '12345678', sort_code: '10-20-30' };
    expect(knownProblem(await attempt(biller.clientId, good, '  '))).toMatchObject({ status: 422, slug: 'reason-required' });
    expect(knownProblem(await attempt(operator.clientId, good, 'why not'))).toMatchObject({ status: 409, slug: 'not-a-biller' });
    expect(knownProblem(await attempt(biller.clientId, { account_number: '12ab', sort_code: '102030' }, 'typo'))).toMatchObject({ status: 422 });
    expect(await t.db.selectFrom('beneficiary_accounts').select('id').where('biller_client_id', '=', biller.clientId).execute()).toEqual([]);
  });
});

describe('the CLI', () => {
  // Starting tsx costs about a second per command, so independent commands run at once.
  it('records the --by operator (or the OS user) and the reason of marks and account changes; failed needs a reason; `audit` lists them', async () => {
    const [paid, failed, blank] = await Promise.all([pendingPayout(), pendingPayout(), pendingPayout()]);
    const biller = await createBiller(t.db);
    const [markedPaid, markedFailed, refused, accountSet] = await Promise.all([
      deductions(['payouts', 'mark-paid', '--payout', paid.payoutId, '--reason', 'statement line 2026-12-02 #88', '--by', 'dana']),
      deductions(['payouts', 'mark-failed', '--payout', failed.payoutId, '--reason', 'returned: account closed']),
      deductions(['payouts', 'mark-failed', '--payout', blank.payoutId, '--reason', ' ']),
      deductions([
        'beneficiary-accounts',
        'set',
        '--biller',
        biller.clientId,
        '--currency',
        'GBP',
        '--account-number',
        '77778885',
        '--sort-code',
        '30-90-91',
        '--holder',
        'Cli Lending Ltd',
        '--reason',
        'onboarding call',
        '--by',
        'erin',
      ]),
    ]);
    expect(markedPaid.code, markedPaid.stderr).toBe(0);
    expect(markedPaid.stdout).toContain(': paid');
    expect(markedFailed.code, markedFailed.stderr).toBe(0);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('--reason must not be empty\n');
    expect(accountSet.code, accountSet.stderr).toBe(0);
    expect(accountSet.stdout).toContain('77778885');

    expect(await auditOf(paid.payoutId)).toEqual([
      expect.objectContaining({ actor_kind: 'cli', actor: 'dana', action: 'payout.marked_paid', reason: 'statement line 2026-12-02 #88' }),
    ]);
    const [failedEntry] = await auditOf(failed.payoutId);
    expect(failedEntry).toMatchObject({ actor_kind: 'cli', action: 'payout.marked_failed', reason: 'returned: account closed' });
    expect(failedEntry!.actor.length).toBeGreaterThan(0);
    expect(failedEntry!.actor).not.toBe('dana');
    expect(await auditOf(blank.payoutId)).toEqual([]);
    expect(await auditOf(biller.clientId)).toEqual([expect.objectContaining({ actor: 'erin', action: 'beneficiary_account.replaced' })]);

    const listed = await deductions(['audit', '--resource', paid.payoutId]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`payout\\.marked_paid  payout ${paid.payoutId}  by dana: statement line 2026-12-02 #88$`)),
    ]);
  }, 120_000);
});
