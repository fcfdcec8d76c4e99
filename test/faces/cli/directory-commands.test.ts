import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProviderClientSecret } from '../../../src/directory/payroll-providers/provider-credentials.ts';
import { secretBoxFor } from '../../../src/platform/shared/secret-box.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// Setting up an installation from the shell, as the walkthrough (docs/walkthrough.md) does: each create prints
// one JSON object whose id the next command takes. Starting tsx costs about a second per command,
// so independent commands run at once.

const bin = new URL('../../../bin/deductions.mjs', import.meta.url).pathname;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

function deductions(args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, DATABASE_URL: t.config.DATABASE_URL, QUEUE_PREFIX: t.config.QUEUE_PREFIX, LOG_LEVEL: 'warn' };
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** The one JSON object a successful --json command printed. */
function json(run: Run): Record<string, any> {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, any>;
}

describe('deductions providers, employers, payrolls, collection-accounts and clients', () => {
  it('set up a provider, its employer and payroll, a provider client and the collection account, each printing its id', async () => {
    const files = json(await deductions(['providers', 'create', '--name', 'Files Payroll', '--files-only', '--region', 'scotland', '--by', 'alice', '--json']));
    expect(files).toMatchObject({ id: expect.any(String), region: 'scotland', lead_time_working_days: 2, connection: { kind: 'files' } });

    const [api, employer, client, account, unknownProvider, incomplete] = await Promise.all([
      deductions(
        [
          'providers',
          'create',
          '--name',
          'API Payroll',
          '--base-url',
          'https://p.example/api',
          '--token-url',
          'https://p.example/token',
          '--client-id',
          'us',
          '--client-secret-stdin',
          '--lead-time',
          '4',
          '--json',
        ],
        'piped-provider-secret\n',
      ),
      deductions(['employers', 'create', '--provider', files.id, '--external-id', 'ACME-1', '--name', 'Acme Retail plc', '--sic-code', '47110', '--json']),
      deductions(['clients', 'create', '--name', 'Files Payroll client', '--role', 'payroll_provider', '--payroll-provider', files.id, '--by', 'alice', '--json']),
      deductions([
        'collection-accounts',
        'set',
        '--currency',
        'GBP',
        '--sort-code',
        '20-00-00',
        '--account-number',
        '41234978',
        '--holder',
        'Salary Deductions Collections Ltd',
        '--reason',
        'first account',
        '--by',
        'bob',
        '--json',
      ]),
      deductions(['employers', 'create', '--provider', randomUUID(), '--external-id', 'X', '--name', 'X', '--json']),
      deductions(['providers', 'create', '--name', 'Half API', '--base-url', 'https://p.example/api', '--json']),
    ]);

    const apiProvider = json(api);
    expect(apiProvider).toMatchObject({ lead_time_working_days: 4, connection: { kind: 'reference_api', client_id: 'us', client_secret_set: true } });
    expect(api.stdout).not.toContain('piped-provider-secret');
    const row = await t.db.selectFrom('payroll_providers').selectAll().where('id', '=', apiProvider.id).executeTakeFirstOrThrow();
    expect(openProviderClientSecret(row.api_client_secret, secretBoxFor(t.config), row.id)).toBe('piped-provider-secret');

    const employerJson = json(employer);
    expect(employerJson).toMatchObject({ id: expect.any(String), payroll_provider_id: files.id, salary_deduction_opt_in_status: 'pending' });
    const clientJson = json(client);
    expect(clientJson).toMatchObject({
      id: expect.any(String),
      role: 'payroll_provider',
      payroll_provider_id: files.id,
      client_secret: expect.stringMatching(/^cs_/),
      api_key: expect.stringMatching(/^ak_/),
    });
    expect(json(account)).toMatchObject({ id: expect.any(String), currency: 'GBP', active: true, replaced: null });

    expect(unknownProvider.code).toBe(1);
    expect(unknownProvider.stderr).toMatch(/^Payroll provider [0-9a-f-]+ does not exist\n$/);
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr.trim().split('\n')).toHaveLength(1);
    expect(incomplete.stderr).toContain('connection.token_url');

    const [optedIn, payroll, badFrequency] = await Promise.all([
      deductions(['employers', 'set-opt-in', '--employer', employerJson.id, '--status', 'opted_in', '--reason', 'signed form', '--by', 'carol', '--json']),
      deductions(['payrolls', 'create', '--employer', employerJson.id, '--external-id', 'ACME-M', '--name', 'Acme monthly', '--frequency', 'monthly', '--json']),
      deductions(['payrolls', 'create', '--employer', employerJson.id, '--external-id', 'ACME-D', '--name', 'Acme daily', '--frequency', 'daily']),
    ]);
    expect(json(optedIn).opt_in_history.map((c: Record<string, unknown>) => [c.from_status, c.to_status, c.changed_by, c.reason])).toEqual([
      [null, 'pending', expect.any(String), null],
      ['pending', 'opted_in', 'carol', 'signed form'],
    ]);
    const payrollJson = json(payroll);
    expect(payrollJson).toMatchObject({ id: expect.any(String), payroll_provider_id: files.id, bank_holiday_region: 'scotland', currency: 'GBP' });
    expect(badFrequency.code).not.toBe(0);
    expect(badFrequency.stderr).toContain('daily');

    const [providerShown, employerShown, payrollShown, clientShown, providers, payrolls, accounts, clientLine] = await Promise.all([
      deductions(['providers', 'show', '--provider', files.id, '--json']),
      deductions(['employers', 'show', '--employer', employerJson.id, '--json']),
      deductions(['payrolls', 'show', '--payroll', payrollJson.id, '--json']),
      deductions(['clients', 'show', '--client', clientJson.id, '--json']),
      deductions(['providers', 'list', '--json']),
      deductions(['payrolls', 'list', '--employer', employerJson.id, '--json']),
      deductions(['collection-accounts', 'list', '--json']),
      deductions(['clients', 'show', '--client', clientJson.id]),
    ]);
    expect(json(providerShown)).toEqual(files);
    expect(json(employerShown)).toMatchObject({ id: employerJson.id, salary_deduction_opt_in_status: 'opted_in' });
    expect(json(payrollShown)).toEqual(payrollJson);
    const { client_secret: secret, api_key: key, ...clientResource } = clientJson;
    expect(json(clientShown)).toEqual(clientResource);
    expect(clientShown.stdout).not.toContain(secret);
    expect(clientShown.stdout).not.toContain(key);
    expect(json(providers).payroll_providers.map((p: { id: string }) => p.id)).toEqual([apiProvider.id, files.id]);
    expect(json(payrolls)).toEqual({ payrolls: [payrollJson] });
    expect(json(accounts).collection_accounts).toHaveLength(1);
    expect(clientLine.stdout).toContain(clientJson.id);

    const audit = await t.db.selectFrom('audit_log').select(['action', 'actor_kind', 'actor', 'resource_id']).orderBy('at').execute();
    expect(audit).toEqual(
      expect.arrayContaining([
        { action: 'payroll_provider.created', actor_kind: 'cli', actor: 'alice', resource_id: files.id },
        { action: 'client.created', actor_kind: 'cli', actor: 'alice', resource_id: clientJson.id },
        { action: 'collection_account.replaced', actor_kind: 'cli', actor: 'bob', resource_id: 'GBP' },
        { action: 'employer.opt_in_changed', actor_kind: 'cli', actor: 'carol', resource_id: employerJson.id },
        { action: 'payroll.created', actor_kind: 'cli', actor: expect.any(String), resource_id: payrollJson.id },
      ]),
    );
  }, 120_000);
});
