import { randomBytes, randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealStoredSecrets } from '../../src/faces/cli/secrets-command.ts';
import type { DB } from '../../src/platform/db/tables.ts';
import { findProviderConnection } from '../../src/directory/payrolls/directory-repository.ts';
import { httpAdapterFactory } from '../../src/directory/payroll-providers/http-adapter.ts';
import { registerPayrollProvider } from '../../src/directory/payroll-providers/provider-credentials.ts';
import { generateSandboxDirectory } from '../../src/faces/sandbox/sandbox-directory.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../src/faces/http/sandbox-server.ts';
import { isSealed, masterKeyFromBase64, SecretBox, secretBoxFor, SecretsKeyError } from '../../src/platform/shared/secret-box.ts';
import { openEndpointSecrets } from '../../src/faces/webhooks/webhook-endpoint-service.ts';
import { signingSecrets, webhookHeaders } from '../../src/faces/webhooks/webhook-signature.ts';
import { createBiller, createOperator } from '../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../support/test-app.ts';

// Secrets we must read back are stored sealed, and nothing else keeps a copy: the test puts known
// secrets in through the API and the services, then looks for them in every text, json and bytea
// column of every table.

const KEY = randomBytes(32).toString('base64');

let t: TestApp;
let sandbox: RunningSandboxProvider;
const directory = generateSandboxDirectory({ seed: 'secrets-at-rest', employers: 1, payrollsPerEmployer: 1, employeesPerPayroll: 2, today: '2026-11-22' });
const PROVIDER_SECRET = `provider-secret-${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  t = await startTestApp({ env: { SECRETS_KEY: KEY } });
  sandbox = await startSandboxProvider({ directory, clientId: 'svc-at-rest', clientSecret: PROVIDER_SECRET });
});
afterAll(async () => {
  await sandbox?.close();
  await t?.close();
});

/** Every table.column (text, varchar, char, json, jsonb, bytea, text[]) whose value contains `needle`. */
async function columnsHolding(db: Kysely<DB>, needle: string): Promise<string[]> {
  const { rows: columns } = await sql<{ table_name: string; column_name: string; data_type: string }>`
    select c.table_name, c.column_name, c.data_type
    from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = 'public'
      and (c.data_type in ('text', 'character varying', 'character', 'json', 'jsonb', 'bytea') or c.udt_name in ('_text', '_varchar'))
  `.execute(db);
  expect(columns.length).toBeGreaterThan(50);
  const hits: string[] = [];
  for (const { table_name: table, column_name: column, data_type: type } of columns) {
    const ref = sql.ref(`${table}.${column}`);
    const contains = type === 'bytea' ? sql`position(convert_to(${needle}, 'UTF8') in ${ref}) > 0` : sql`strpos(${ref}::text, ${needle}) > 0`;
    const { rows } = await sql<{ found: boolean }>`select exists (select from ${sql.table(table)} where ${contains}) as found`.execute(db);
    if (rows[0]!.found) hits.push(`${table}.${column}`);
  }
  return hits;
}

/** A secret in every form it could be stored in: whole, and a whsec_ secret's key material alone. */
function formsOf(secret: string): string[] {
  return secret.startsWith('whsec_') ? [secret, secret.slice('whsec_'.length)] : [secret];
}

describe('no secret is stored in clear', () => {
  const known: string[] = [];
  let endpointId: string;
  let replays: Array<{ key: string; url: string; headers: Record<string, string>; body: object | undefined }>;

  beforeAll(async () => {
    const biller = await createBiller(t.db);
    const billerHeaders = await authHeaders(t.app, biller);
    const operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
    const victim = await createBiller(t.db);
    replays = [];

    // Idempotency keys on every call, so their responses are stored for replay too.
    const send = async (url: string, headers: Record<string, string>, body?: object) => {
      const key = randomUUID();
      const response = await injectJson(t.app, { method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, ...(body ? { body } : {}) });
      expect(response.statusCode, response.body).toBeLessThan(300);
      replays.push({ key, url, headers, body });
      return { response };
    };
    const created = (await send('/webhook-endpoints', billerHeaders, { url: 'http://127.0.0.1:9/hooks' })).response.json().webhook_endpoint;
    endpointId = created.id;
    const rotated = (await send(`/webhook-endpoints/${endpointId}/rotate-secret`, billerHeaders)).response.json().webhook_endpoint;
    const clientSecret = (await send(`/clients/${victim.clientId}/rotate-secret`, operatorHeaders, { reason: 'test' })).response.json().client_secret;
    const apiKey = (await send(`/clients/${victim.clientId}/rotate-api-key`, operatorHeaders, { reason: 'test' })).response.json().api_key;
    known.push(created.secret, rotated.secret, clientSecret, apiKey, victim.clientSecret, victim.apiKey, biller.clientSecret, biller.apiKey);

    await registerPayrollProvider(t.db, secretBoxFor(t.config), {
      name: 'Sealed Payroll Ltd',
      apiBaseUrl: sandbox.url,
      apiTokenUrl: sandbox.tokenUrl,
      apiClientId: 'svc-at-rest',
      apiClientSecret: PROVIDER_SECRET,
      leadTimeWorkingDays: 2,
    });
    known.push(PROVIDER_SECRET);
  });

  it('finds what is there: the scan sees text and bytea columns (here, an endpoint id in a stored response)', async () => {
    expect(await columnsHolding(t.db, endpointId)).toContain('idempotency_keys.response_body');
    expect(await columnsHolding(t.db, 'Sealed Payroll Ltd')).toEqual(['payroll_providers.name']);
  });

  it('finds no webhook secret, provider secret, client secret or API key in any column of any table', async () => {
    expect(known).toHaveLength(9);
    for (const secret of known) {
      for (const form of formsOf(secret)) expect(await columnsHolding(t.db, form), form.slice(0, 8)).toEqual([]);
    }
  });

  it('keeps the webhook secrets sealed yet usable: the stored ones open and sign what a receiver verifies', async () => {
    const row = await t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow();
    expect(isSealed(row.secret)).toBe(true);
    expect(isSealed(row.previous_secret!)).toBe(true);
    const opened = openEndpointSecrets(row, secretBoxFor(t.config));
    const body = JSON.stringify({ id: 'evt', type: 'mandate.updated' });
    const headers = webhookHeaders(signingSecrets(opened, new Date()), 'evt_1', new Date(), body);
    for (const secret of [known[0]!, known[1]!]) expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('replays stored responses with the secret masked, never the secret', async () => {
    expect(replays).toHaveLength(4);
    for (const { key, url, headers, body } of replays) {
      const replay = await injectJson(t.app, { method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, ...(body ? { body } : {}) });
      expect(replay.headers['idempotent-replayed'], url).toBe('true');
      const json = replay.json();
      const shown = json.webhook_endpoint?.secret ?? json.client_secret ?? json.api_key;
      expect(shown, url).toMatch(/^(whsec|cs|ak)_\*{8}$/);
      for (const secret of known) expect(replay.body).not.toContain(secret);
    }
  });

  it("opens the provider's sealed client secret only where the adapter is given the key", async () => {
    const provider = await t.db.selectFrom('payroll_providers').select('id').where('name', '=', 'Sealed Payroll Ltd').executeTakeFirstOrThrow();
    const connection = (await findProviderConnection(t.db, provider.id))!;
    expect(isSealed(connection.api_client_secret!)).toBe(true);
    // The sandbox answers only to the right client secret: a payroll's information proves the adapter opened it.
    const adapter = httpAdapterFactory({ secrets: secretBoxFor(t.config), timeoutMs: 5_000 })(connection)!;
    const information = await adapter.payrollInformation(directory.payrolls[0]!.id);
    expect(information).toBeTruthy();
    expect(() => httpAdapterFactory()(connection)).toThrow(SecretsKeyError);
  });
});

describe('secrets stored before encryption, and master key rotation', () => {
  it('`deductions migrate` seals plain-text secrets in place; a second run changes nothing', async () => {
    const plainWebhook = `whsec_${randomBytes(32).toString('base64')}`;
    const plainPrevious = `whsec_${randomBytes(32).toString('base64')}`;
    const plainProvider = `legacy-${randomBytes(8).toString('hex')}`;
    const biller = await createBiller(t.db);
    const endpoint = await t.db
      .insertInto('webhook_endpoints')
      .values({
        biller_client_id: biller.clientId,
        url: 'https://hooks.example.com/',
        event_types: [],
        secret: plainWebhook,
        previous_secret: plainPrevious,
        previous_secret_expires_at: new Date(Date.now() + 3_600_000),
        disabled_reason: null,
        failing_since: null,
        deleted_at: null,
        description: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const provider = await t.db
      .insertInto('payroll_providers')
      .values({ name: 'Legacy Payroll', api_base_url: 'https://payroll.example.com', api_token_url: null, api_client_id: 'x', api_client_secret: plainProvider })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(await columnsHolding(t.db, plainProvider)).toEqual(['payroll_providers.api_client_secret']);
    expect(await columnsHolding(t.db, plainWebhook)).toEqual(['webhook_endpoints.secret']);

    const box = secretBoxFor(t.config);
    expect(await sealStoredSecrets(t.db, box)).toMatchObject({ webhookEndpoints: 1, payrollProviders: 1 });
    for (const plain of [plainWebhook, plainPrevious, plainProvider]) expect(await columnsHolding(t.db, plain)).toEqual([]);
    const row = await t.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpoint.id).executeTakeFirstOrThrow();
    expect(openEndpointSecrets(row, box)).toMatchObject({ secret: plainWebhook, previous_secret: plainPrevious });
    const connection = (await findProviderConnection(t.db, provider.id))!;
    expect(box.open(connection.api_client_secret!, 'payroll-provider-client-secret')).toBe(plainProvider);

    expect(await sealStoredSecrets(t.db, box)).toMatchObject({ webhookEndpoints: 0, payrollProviders: 0 });
  });

  it('rotating the master key re-wraps every stored secret; then the old key can be retired', async () => {
    const newKey = randomBytes(32).toString('base64');
    const rotating = new SecretBox(masterKeyFromBase64(newKey), [masterKeyFromBase64(KEY)]);
    const before = await t.db.selectFrom('webhook_endpoints').select(['id', 'secret', 'previous_secret']).orderBy('id').execute();
    const summary = await sealStoredSecrets(t.db, rotating);
    expect(summary.keyId).toBe(rotating.currentKeyId);
    expect(summary.webhookEndpoints).toBe(before.length);
    expect(summary.payrollProviders).toBeGreaterThanOrEqual(2);

    const onlyNew = new SecretBox(masterKeyFromBase64(newKey));
    const onlyOld = new SecretBox(masterKeyFromBase64(KEY));
    const after = await t.db.selectFrom('webhook_endpoints').select(['id', 'secret', 'previous_secret']).orderBy('id').execute();
    for (const [i, row] of after.entries()) {
      expect(row.secret.split(':')[2]).toBe(onlyNew.currentKeyId);
      expect(openEndpointSecrets(row, onlyNew)).toEqual(openEndpointSecrets(before[i]!, onlyOld));
      expect(() => openEndpointSecrets(row, onlyOld)).toThrow(SecretsKeyError);
    }
    expect(await sealStoredSecrets(t.db, rotating)).toMatchObject({ webhookEndpoints: 0, payrollProviders: 0 });
  });
});
