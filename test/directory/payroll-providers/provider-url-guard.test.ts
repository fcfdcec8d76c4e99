import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../../src/faces/http/sandbox-server.ts';
import { createHttpAdapter } from '../../../src/directory/payroll-providers/http-adapter.ts';
import { fetchPinned } from '../../../src/directory/payroll-providers/pinned-fetch.ts';
import { ProviderError } from '../../../src/directory/payroll-providers/provider-errors.ts';
import {
  providerUrlPolicy,
  ProviderUrlRefused,
  unguardedProviderUrlPolicy,
  type ProviderHostResolver,
  type ProviderUrlPolicy,
} from '../../../src/directory/payroll-providers/provider-url-guard.ts';
import { generateSandboxDirectory } from '../../../src/faces/sandbox/sandbox-directory.ts';
import { resolveWebhookTarget } from '../../../src/faces/webhooks/webhook-target.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createOperator } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Operator-set provider URLs receive our client secret and employees' data: https to a public
// address only, checked when they are set and again at every connection (pinned to the address
// checked), unless PROVIDER_ALLOW_PRIVATE_URLS is on. The rule is the webhook target guard's.

/** A DNS server that answers what the test says, for names that do not exist. */
const dnsAnswering =
  (answers: Record<string, string>): ProviderHostResolver =>
  async (hostname) => {
    const address = answers[hostname];
    if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };

const guarded = (answers: Record<string, string> = {}): ProviderUrlPolicy => providerUrlPolicy(false, resolveWebhookTarget, dnsAnswering(answers));

describe('the URL policy', () => {
  it('refuses http, loopback, private, link-local and special-purpose addresses, literal or resolved', async () => {
    const policy = guarded({
      'payroll.example': '93.184.216.34',
      'loopback.example': '127.0.0.1',
      'metadata.example': '169.254.169.254',
      'mapped.example': '::ffff:10.0.0.1',
    });
    expect((await policy.target('https://payroll.example/api')).address).toEqual({ address: '93.184.216.34', family: 4 });
    for (const url of [
      'http://payroll.example/api',
      'https://127.0.0.1/api',
      'https://[::1]/api',
      'https://10.1.2.3/api',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/api',
      'https://[fe80::1]/api',
      'https://loopback.example/api',
      'https://metadata.example/api',
      'https://mapped.example/api',
      'https://nowhere.example/api',
      'https://user:pass@payroll.example/api',
    ]) {
      await expect(policy.target(url), url).rejects.toBeInstanceOf(ProviderUrlRefused);
    }
  });

  it('with PROVIDER_ALLOW_PRIVATE_URLS, lets http and private addresses through, unpinned', async () => {
    const open = providerUrlPolicy(true, resolveWebhookTarget, dnsAnswering({}));
    expect(await open.target('http://127.0.0.1:8080/api')).toMatchObject({ address: null });
    expect(await unguardedProviderUrlPolicy({ PROVIDER_ALLOW_PRIVATE_URLS: 'true' }).target('http://127.0.0.1/api')).toMatchObject({ address: null });
    // An adapter given no policy cannot check anything: without the setting it refuses every URL.
    await expect(unguardedProviderUrlPolicy({}).target('https://payroll.example/api')).rejects.toBeInstanceOf(ProviderUrlRefused);
  });
});

describe('at connect time', () => {
  const directory = generateSandboxDirectory({ seed: 'provider-url-guard', employers: 1, payrollsPerEmployer: 1, employeesPerPayroll: 2, today: '2026-11-22' });
  const payrollId = directory.payrolls[0]!.id;
  let sandbox: RunningSandboxProvider;
  const seen: IncomingMessage[] = [];
  let spy: ReturnType<typeof createServer>;
  let spyUrl: string;

  beforeAll(async () => {
    sandbox = await startSandboxProvider({ directory, clientId: 'service-client', clientSecret: 'sandbox-secret-5678' });
    spy = createServer((request, response) => {
      seen.push(request);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ host: request.headers.host }));
    });
    await new Promise<void>((resolve) => spy.listen(0, '127.0.0.1', resolve));
    spyUrl = `http://127.0.0.1:${(spy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await sandbox?.close();
    spy?.closeAllConnections();
    await new Promise((resolve) => spy?.close(resolve));
  });

  const connection = (base: string, token: string | null) => ({
    id: randomUUID(),
    api_base_url: base,
    api_token_url: token,
    api_client_id: 'service-client',
    api_client_secret: 'sandbox-secret-5678',
  });

  it('never calls, nor sends the client secret to, a URL the policy refuses: http, or a name that resolves to loopback', async () => {
    const before = seen.length;
    const port = (spy.address() as AddressInfo).port;
    for (const [base, token] of [
      [spyUrl, `${spyUrl}/token`],
      [`https://rebinding.example:${port}/api`, `https://rebinding.example:${port}/token`],
    ] as const) {
      const adapter = createHttpAdapter(connection(base, token), { urls: guarded({ 'rebinding.example': '127.0.0.1' }), retries: 0 });
      const error = await adapter.payrollInformation(payrollId).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ failure: 'misconfigured', code: 'provider-misconfigured' });
      // What may reach an API client names no URL or address.
      expect((error as ProviderError).detail).not.toMatch(/127\.0\.0\.1|rebinding|http:/);
    }
    expect(seen.length).toBe(before);
  });

  it('connects to the address the guard checked, not to a fresh DNS answer', async () => {
    // The guard vouched for an address (here the sandbox's own, as a stand-in for a public one);
    // the host name resolves nowhere, so reaching the sandbox proves the connection was pinned.
    const port = new URL(sandbox.url).port;
    const pinnedGuard: ProviderUrlPolicy = {
      allowPrivate: false,
      target: async (url) => ({ url: new URL(url), address: { address: '127.0.0.1', family: 4 } }),
    };
    const base = sandbox.url.replace('127.0.0.1', 'payroll.invalid');
    const token = sandbox.tokenUrl.replace('127.0.0.1', 'payroll.invalid');
    expect(base).toContain(`payroll.invalid:${port}`);
    const answer = await createHttpAdapter(connection(base, token), { urls: pinnedGuard }).payrollInformation(payrollId);
    expect(answer.payroll.id).toBe(payrollId);
  });

  it('fetchPinned sends the request, Host header and all, to the pinned address', async () => {
    const port = (spy.address() as AddressInfo).port;
    const response = await fetchPinned(
      `http://provider.invalid:${port}/probe`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal: AbortSignal.timeout(5_000) },
      { address: '127.0.0.1', family: 4 },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ host: `provider.invalid:${port}` });
    await expect(
      fetchPinned(`http://provider.invalid:${port}/`, { method: 'GET', headers: {}, signal: AbortSignal.abort() }, { address: '127.0.0.1', family: 4 }),
    ).rejects.toBeDefined();
  });
});

describe('when an operator sets them', () => {
  let t: TestApp;
  let operator: IssuedCredentials;
  let headers: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ env: { PROVIDER_ALLOW_PRIVATE_URLS: 'false' } });
    operator = await createOperator(t.db);
    headers = await authHeaders(t.app, operator);
  });
  afterAll(async () => t?.close());

  const post = (url: string, body: object) => injectJson(t.app, { method: 'POST', url, headers: { ...headers, 'idempotency-key': randomUUID() }, body });
  const connection = (base_url: string, token_url: string) => ({ kind: 'reference_api', base_url, token_url, client_id: 'us', client_secret: 'provider-s3cret' });

  it('refuses http and non-public addresses with 422 naming the field, and stores nothing', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['http://payroll.example/api', 'https://203.0.113.9/token', ['/connection/base_url', '/connection/token_url']],
      ['https://127.0.0.1/api', 'https://127.0.0.1/token', ['/connection/base_url', '/connection/token_url']],
      ['https://[::ffff:a9fe:a9fe]/api', 'https://169.254.169.254/token', ['/connection/base_url', '/connection/token_url']],
      ['https://localhost/api', 'https://10.0.0.8/token', ['/connection/base_url', '/connection/token_url']],
    ];
    for (const [base, token, pointers] of cases) {
      const response = await post('/admin/payroll-providers', { name: `Bad ${base}`, connection: connection(base, token) });
      expect(response.statusCode, response.body).toBe(422);
      expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}provider-url-refused`);
      expect(response.json().errors.map((error: { pointer: string }) => error.pointer)).toEqual(pointers);
      expect(response.body).not.toContain('provider-s3cret');
    }
    expect(await t.db.selectFrom('payroll_providers').select('id').where('name', 'like', 'Bad %').execute()).toEqual([]);
  });

  it('refuses moving a provider onto such a URL, kept URLs included', async () => {
    const files = await post('/admin/payroll-providers', { name: 'Files first', connection: { kind: 'files' } });
    expect(files.statusCode, files.body).toBe(201);
    const id = files.json().payroll_provider.id;
    const moved = await post(`/admin/payroll-providers/${id}`, { connection: connection('http://payroll.example/api', 'http://payroll.example/token') });
    expect(moved.statusCode, moved.body).toBe(422);
    expect(moved.json().errors.map((error: { pointer: string }) => error.pointer)).toEqual(['/connection/base_url', '/connection/token_url']);
    expect(await t.db.selectFrom('payroll_providers').select('api_base_url').where('id', '=', id).executeTakeFirstOrThrow()).toEqual({ api_base_url: null });

    // A row written before this rule (or while the setting was on): rotating its secret alone is refused too.
    await t.db
      .updateTable('payroll_providers')
      .set({ api_base_url: 'http://10.0.0.5/api', api_token_url: 'http://10.0.0.5/token', api_client_id: 'us' })
      .where('id', '=', id)
      .execute();
    const rotated = await post(`/admin/payroll-providers/${id}`, { connection: { kind: 'reference_api', client_secret: 'rotated-s3cret' } });
    expect(rotated.statusCode, rotated.body).toBe(422);
  });

  it('`deductions providers create` refuses them too, naming the field', { timeout: 60_000 }, async () => {
    const run = await runDeductions(
      [
        'providers',
        'create',
        '--name',
        'CLI http',
        '--base-url',
        'http://payroll.example/api',
        '--token-url',
        'https://127.0.0.1/token',
        '--client-id',
        'us',
        '--client-secret',
        'x',
      ],
      { ...cliEnvOf(t.config), PROVIDER_ALLOW_PRIVATE_URLS: 'false' },
    );
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/https/);
    expect(run.stderr).toMatch(/base_url/);
  });
});
