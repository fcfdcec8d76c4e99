import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxDescription } from '../../../src/faces/sandbox/sandbox-setup-service.ts';
import { PLACEHOLDER_BENEFICIARY_ACCOUNT } from '../../../src/faces/sandbox/sandbox-setup-service.ts';
import { createBiller, createOperator } from '../../support/factories.ts';
import { fetchToken, startTestApp, type TestApp } from '../../support/test-app.ts';
import { runDeductions } from '../../support/cli.ts';

// `deductions sandbox create`, run as an operator would, against this file's private database.

let t: TestApp;
let keyDir: string;
let env: Record<string, string>;

const deductions = (args: string[]) => runDeductions(args, env);

beforeAll(async () => {
  t = await startTestApp();
  keyDir = mkdtempSync(join(tmpdir(), 'deductions-sandbox-'));
  env = {
    DATABASE_URL: t.config.DATABASE_URL,
    REDIS_URL: t.config.REDIS_URL,
    QUEUE_PREFIX: t.config.QUEUE_PREFIX,
    AUTH_SIGNING_KEY_FILE: join(keyDir, 'signing-key.pem'),
    SECRETS_KEY_FILE: join(keyDir, 'secrets-key'),
    LOG_LEVEL: 'silent',
  };
});
afterAll(async () => {
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  await t?.close();
});

describe('deductions sandbox create', () => {
  let live: Awaited<ReturnType<typeof createBiller>>;
  let first: SandboxDescription;
  let again: SandboxDescription;

  beforeAll(async () => {
    live = await createBiller(t.db);
    await t.db
      .insertInto('beneficiary_accounts')
      .values({ biller_client_id: live.clientId, currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' })
      .execute();
    const args = ['sandbox', 'create', '--biller', live.clientId, '--employers', '3', '--employees', '4', '--seed', 'create-test', '--by', 'ops-tester', '--json'];
    const run = await deductions(args);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    first = JSON.parse(run.stdout) as SandboxDescription;
    const second = await deductions(args);
    expect(second.code).toBe(0);
    again = JSON.parse(second.stdout) as SandboxDescription;
  }, 60_000);

  it('prints one JSON object with the new sandbox biller’s credentials, once', async () => {
    expect(first).toMatchObject({ created: true, live_biller_client_id: live.clientId, seed: 'create-test' });
    expect(first.biller.client_id).not.toBe(live.clientId);
    expect(first.biller.client_secret).toMatch(/\S{20,}/);
    expect(first.biller.api_key).toMatch(/\S{20,}/);
    expect(first.biller.client_secret).not.toBe(live.clientSecret);
    // The printed credentials work, and are the sandbox biller's, not the live one's.
    const token = await fetchToken(t.app, { clientId: first.biller.client_id, clientSecret: first.biller.client_secret!, apiKey: first.biller.api_key! });
    expect(token).toBeTruthy();
  });

  it('marks the sandbox biller, its provider and the provider’s client as sandbox; the live biller stays live', async () => {
    const clients = await t.db.selectFrom('clients').select(['id', 'role', 'sandbox', 'scopes', 'payroll_provider_id']).execute();
    const byId = new Map(clients.map((c) => [c.id, c]));
    expect(byId.get(live.clientId)).toMatchObject({ sandbox: false });
    expect(byId.get(first.biller.client_id)).toMatchObject({ role: 'biller', sandbox: true });
    expect(byId.get(first.biller.client_id)!.scopes).toContain('sandbox:simulate');
    expect(byId.get(first.payroll_provider.client_id)).toMatchObject({ role: 'payroll_provider', sandbox: true, payroll_provider_id: first.payroll_provider.id });
    const provider = await t.db.selectFrom('payroll_providers').selectAll().where('id', '=', first.payroll_provider.id).executeTakeFirstOrThrow();
    expect(provider).toMatchObject({ sandbox: true, api_base_url: null, api_client_secret: null });
  });

  it('copies the live biller’s beneficiary account', () => {
    expect(first.beneficiary_accounts).toEqual([{ currency: 'GBP', account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Acme Lending Ltd' }]);
  });

  it('makes employers of each opt-in status, payrolls of several frequencies with months of pay dates, and employees', async () => {
    expect(first.employers.map((e) => e.salary_deduction_opt_in_status).sort()).toEqual(['opted_in', 'opted_out', 'pending']);
    const payrolls = first.employers.flatMap((e) => e.payrolls);
    expect(payrolls).toHaveLength(6);
    expect(new Set(payrolls.map((p) => p.payment_run_frequency)).size).toBeGreaterThanOrEqual(3);
    for (const payroll of payrolls) {
      expect(payroll.next_pay_date, payroll.id).not.toBeNull();
      const dates = await t.db.selectFrom('pay_dates').select(['pay_date', 'lock_date']).where('payroll_id', '=', payroll.id).orderBy('pay_date').execute();
      expect(dates.length).toBe(12);
      expect(dates.every((d) => d.lock_date < d.pay_date)).toBe(true);
    }
    expect(first.employee_count).toBeGreaterThanOrEqual(20);
    const statuses = first.example_employees.map((p) => p.availability_status);
    expect(statuses.filter((s) => s === 'confirmed')).toHaveLength(3);
    expect(statuses).toEqual(expect.arrayContaining(['pending_employer_opt_in', 'not_eligible']));
    for (const person of first.example_employees) {
      expect(person.national_registration_number).toMatch(/^QQ\d{6}[A-D]$/);
      expect(person.date_of_birth).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('run again for the same biller, makes nothing and describes the same sandbox without credentials', async () => {
    expect(again).toMatchObject({ id: first.id, created: false, biller: { client_id: first.biller.client_id } });
    expect(again.biller.client_secret).toBeUndefined();
    expect(again.biller.api_key).toBeUndefined();
    expect(again.employers).toEqual(first.employers);
    expect((await t.db.selectFrom('sandboxes').select('id').execute()).length).toBe(1);
  });

  it('is audited with who made it', async () => {
    const entries = await t.db.selectFrom('audit_log').selectAll().where('action', '=', 'sandbox.created').execute();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor_kind: 'cli', actor: 'ops-tester', resource_id: first.id });
  });
});

describe('deductions sandbox create refuses', () => {
  it('an operator client, a sandbox client and an unknown id, each in one line with a non-zero exit', async () => {
    const operator = await createOperator(t.db);
    const unknown = '2c6f1b9e-7d3a-4c5e-9f8a-1b2c3d4e5f60';
    const [asOperator, asUnknown, badCount] = await Promise.all([
      deductions(['sandbox', 'create', '--biller', operator.clientId]),
      deductions(['sandbox', 'create', '--biller', unknown]),
      deductions(['sandbox', 'create', '--biller', unknown, '--employers', '0']),
    ]);
    expect(asOperator.code).toBe(1);
    expect(asOperator.stderr.trim().split('\n')).toHaveLength(1);
    expect(asOperator.stderr).toContain('a sandbox is made for a live biller');
    expect(asUnknown.code).toBe(1);
    expect(asUnknown.stderr).toContain(unknown);
    expect(badCount.code).not.toBe(0);
    expect(badCount.stderr).toContain('--employers');
  }, 60_000);

  it('a sandbox client as the live biller (while a live biller without an account gets the placeholder account)', async () => {
    const bare = await createBiller(t.db);
    const run = await deductions(['sandbox', 'create', '--biller', bare.clientId, '--employers', '1', '--employees', '2']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Store the secret and API key now');
    expect(run.stdout).toContain(`${PLACEHOLDER_BENEFICIARY_ACCOUNT.sort_code} ${PLACEHOLDER_BENEFICIARY_ACCOUNT.account_number}`);
    const twin = await t.db.selectFrom('sandboxes').select('biller_client_id').where('live_biller_client_id', '=', bare.clientId).executeTakeFirstOrThrow();
    const ofTwin = await deductions(['sandbox', 'create', '--biller', twin.biller_client_id]);
    expect(ofTwin.code).toBe(1);
    expect(ofTwin.stderr).toContain('is a sandbox client');
  }, 60_000);
});
