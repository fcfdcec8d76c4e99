import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { composition } from '../../bin/composition.ts';
import { apiTypesOf, GENERATED_TYPES_FILE } from '../../examples/integration/generate-types.ts';
import { ApiError, billerClient, requestAccessToken } from '../../examples/integration/src/client.ts';
import { createMandate, type Person } from '../../examples/integration/src/biller-api.ts';
import { runWalkthrough, type WalkthroughResult } from '../../examples/integration/src/walkthrough.ts';
import { startWebhookReceiver, UnverifiedDelivery, verifyDelivery, type SignatureHeaders, type WebhookReceiver } from '../../examples/integration/src/webhooks.ts';
import { queueNames } from '../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../src/platform/queue/queues.ts';
import { producerConnection } from '../../src/platform/runtime/redis-connections.ts';
import { requestEventDispatch } from '../../src/faces/webhooks/webhook-jobs.ts';
import type { WorkerHost } from '../../src/faces/workers/worker-host.ts';
import { makeSandbox, sandboxCredentials } from '../faces/sandbox/sandbox-api.ts';
import { runtimeOf } from '../support/runtime.ts';
import { startTestApp, type TestApp } from '../support/test-app.ts';
import { buildWorld, type World } from '../support/world.ts';

/**
 * The example integration (examples/integration) is a biller's client typed from /openapi.json by
 * openapi-typescript and openapi-fetch. Here it is type-checked against the types the running service's
 * document generates now, so a change of the API that breaks a client fails this test; its committed
 * types are held to that document; and it runs against the service over HTTP, webhooks included.
 */

const exampleDir = fileURLToPath(new URL('../../examples/integration/', import.meta.url));
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

let t: TestApp;
let baseUrl: string;
let workers: WorkerHost;
let dispatcher: Queue;
let dispatching: NodeJS.Timeout;
let servedDocument: any;
let generatedTypes: string;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestApp();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  workers = await composition.startWorkers(runtimeOf(t), { schedule: false });
  // The dispatcher runs every 2 s in a deployment; here it is asked for every 100 ms.
  dispatcher = createQueue(queueNames.webhookDispatch, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
  dispatching = setInterval(() => void requestEventDispatch(dispatcher).catch(() => {}), 100);
  const served = await fetch(`${baseUrl}/openapi.json`);
  expect(served.status).toBe(200);
  servedDocument = await served.json();
  generatedTypes = await apiTypesOf(servedDocument);
});
afterAll(async () => {
  clearInterval(dispatching);
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await workers?.close();
  await dispatcher?.close();
  await t?.close();
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}) {
  const started = await startWebhookReceiver(options);
  receivers.push(started);
  return started;
}

/** The receiver, and the secrets the walkthrough gives it told to the test as well. */
function tellingSecrets(hooks: WebhookReceiver, secrets: string[]): WebhookReceiver {
  return {
    url: hooks.url,
    events: hooks.events,
    get ignored() {
      return hooks.ignored;
    },
    get refused() {
      return hooks.refused;
    },
    useSecret(secret) {
      secrets.push(secret);
      hooks.useSecret(secret);
    },
    waitFor: (condition, timeoutMs) => hooks.waitFor(condition, timeoutMs),
    close: () => hooks.close(),
  };
}

let previousProgram: ts.Program | undefined;

/** The example's diagnostics under its own tsconfig, with `types` in place of its committed generated file. */
function exampleDiagnostics(types: string): string[] {
  const configFile = join(exampleDir, 'tsconfig.json');
  const config = ts.readConfigFile(configFile, ts.sys.readFile);
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, exampleDir, undefined, configFile);
  const host = ts.createCompilerHost(parsed.options);
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => (file === GENERATED_TYPES_FILE ? types : readFile(file));
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError, shouldCreate) =>
    file === GENERATED_TYPES_FILE ? ts.createSourceFile(file, types, language) : getSourceFile(file, language, onError, shouldCreate);
  // The program before, when there is one, lends every file that did not change (the libraries' types).
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host, ...(previousProgram ? { oldProgram: previousProgram } : {}) });
  previousProgram = program;
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.fileName.replace(repositoryRoot, '')}:${line + 1}: ${message}`;
  });
}

/** The first line where two texts differ, shown from both; undefined when they are the same. */
function firstDifference(committed: string, generated: string): string | undefined {
  if (committed === generated) return undefined;
  const [a, b] = [committed.split('\n'), generated.split('\n')];
  const line = a.findIndex((text, i) => text !== b[i]);
  const at = line === -1 ? a.length : line;
  return `line ${at + 1}: committed ${JSON.stringify(a[at] ?? '<end of file>')}, generated ${JSON.stringify(b[at] ?? '<end of file>')}`;
}

describe("the example's types, generated from the served /openapi.json", () => {
  it('type-checks the example against the types the running service generates: a change that breaks the client fails here', () => {
    expect(exampleDiagnostics(generatedTypes)).toEqual([]);
  });

  it('fails to type-check when the document changes under the client: a response field and a request field renamed', async () => {
    // The check above is worth something only if it sees a breaking change. Rename, in a copy of the
    // served document, a field the walkthrough reads (the mandate's `status`) and one it sends (the
    // payment request's `mandate_id`), as a change of the API would; generate, check: it must fail.
    const changed = structuredClone(servedDocument);
    const rename = (schema: any, from: string, to: string) => {
      expect(schema.properties[from], `${from} is no longer in the document: rename another field`).toBeDefined();
      schema.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, property]) => [name === from ? to : name, property]));
      schema.required = schema.required.map((name: string) => (name === from ? to : name));
    };
    rename(changed.components.schemas.MandateRecordResponse, 'status', 'state');
    rename(changed.components.schemas.PaymentRecordRequest, 'mandate_id', 'mandate');
    const diagnostics = exampleDiagnostics(await apiTypesOf(changed)).join('\n');
    expect(diagnostics).toMatch(/walkthrough\.ts:\d+: Property 'status' does not exist/);
    expect(diagnostics).toMatch(/biller-api\.ts:\d+: Object literal may only specify known properties, \w+ 'mandate_id' does not exist/);
  });

  it("names the versions of its dependencies that the service's own package.json installs, which these tests run", () => {
    const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
    const example = read(join(exampleDir, 'package.json'));
    const root = read(join(repositoryRoot, 'package.json'));
    const rootRanges: Record<string, string> = { ...root.dependencies, ...root.devDependencies };
    for (const [name, range] of Object.entries({ ...example.dependencies, ...example.devDependencies })) expect([name, range]).toEqual([name, rootRanges[name]]);
  });

  it('has the committed types up to date with the served document', () => {
    const committed = readFileSync(GENERATED_TYPES_FILE, 'utf8');
    const difference = firstDifference(committed, generatedTypes);
    expect(difference, `examples/integration/src/generated/openapi.d.ts is stale: run npm run examples:types (first difference at ${difference})`).toBeUndefined();
  });
});

describe('the example against the running service', () => {
  let world: World;
  let person: Person;

  beforeAll(async () => {
    world = await buildWorld(t.db, { billers: 2 });
    const { employee } = world;
    person = {
      national_registration_number: employee.national_registration_number!,
      date_of_birth: employee.date_of_birth!,
      given_name: employee.given_name,
      family_name: employee.family_name,
    };
  });

  it('walks token, availability, mandate, enablement, payment request and schedule, told of each by a verified webhook', async () => {
    const deliveries: Array<{ body: string; headers: SignatureHeaders }> = [];
    const hooks = await receiver({ onEvent: (_event, delivery) => deliveries.push(delivery) });
    const secrets: string[] = [];
    const biller = world.billers[0]!;
    const lines: string[] = [];
    const result: WalkthroughResult = await runWalkthrough({
      api: billerClient(baseUrl, biller),
      person,
      receiver: tellingSecrets(hooks, secrets),
      log: (line) => lines.push(line),
      // Its deliveries are read below.
      keepWebhookEndpoint: true,
    });

    const payDates = (await t.db.selectFrom('pay_dates').select('pay_date').where('payroll_id', '=', world.payroll.id).orderBy('pay_date').execute()).map(
      (row) => row.pay_date,
    );
    expect(result.light).toEqual({ availability_status: 'confirmed', employment_count: 1 });
    expect(result.full.availability_status).toBe('confirmed');
    expect(result.full.employments.map(({ employment }) => [employment.employee_id, employment.payrolls.map(({ payroll }) => payroll.id)])).toEqual([
      [world.employee.id, [world.payroll.id]],
    ]);
    expect(result.mandate).toMatchObject({ status: 'pending_enablement', employee_id: world.employee.id, payroll_id: world.payroll.id, reference: 'LOAN-0001' });
    expect(result.enablement).toEqual({ employee_id: world.employee.id, payroll_id: world.payroll.id, mandate_id: result.mandate.id, status: 'enabled', reason: null });
    expect(result.activeMandate).toMatchObject({ id: result.mandate.id, status: 'active', version: result.mandate.version + 1 });
    expect(result.payment).toMatchObject({ mandate_id: result.mandate.id, status: 'pending', amount: 2_500, currency: 'GBP', target_pay_date: payDates[0] });
    // The retry with the same Idempotency-Key was answered from the first call, and made nothing.
    expect(result.retriedPayment).toEqual({ payment: result.payment, replayed: true });
    expect(result.schedule).toMatchObject({ mandate_id: result.mandate.id, status: 'active', total_amount: 3_000, instalment_count: 3 });
    expect(result.schedule.instalments.map((instalment) => [instalment.amount, instalment.target_pay_date])).toEqual(payDates.slice(0, 3).map((payDate) => [1_000, payDate]));
    expect(result.readBack).toEqual({ payment: result.payment, schedule: result.schedule });
    expect(result.deletedPayment).toMatchObject({ id: result.payment.id, status: 'cancelled', version: result.payment.version + 1 });
    const stored = await t.db
      .selectFrom('payment_requests')
      .select(['id', 'amount'])
      .where('mandate_id', '=', result.mandate.id)
      .orderBy('created_at')
      .orderBy('instalment_number')
      .execute();
    expect(stored.map((row) => row.id)).toEqual([result.payment.id, ...result.schedule.instalments.map((instalment) => instalment.payment_id)]);

    // Every event of the biller reached the example's receiver, verified with the endpoint's secret by
    // the standardwebhooks package, once each, with the event id as the webhook-id and the body as stored.
    const events = await t.db.selectFrom('events').select(['id', 'type']).where('biller_client_id', '=', biller.clientId).orderBy('sequence').execute();
    expect(events.map((event) => event.type)).toEqual([
      'mandate.created',
      'mandate.updated',
      'payment_request.created',
      'payment_request.created',
      'payment_request.created',
      'payment_request.created',
      'payment_request.updated',
    ]);
    expect(result.events.map((event) => event.id).sort()).toEqual(events.map((event) => event.id).sort());
    const api = billerClient(baseUrl, biller);
    for (const event of result.events) {
      const shown = await api.GET('/events/{event_id}', { params: { path: { event_id: event.id } } });
      expect(event).toEqual(shown.data?.event);
    }
    expect(hooks.refused).toBe(0);
    expect(lines).toContain('webhooks: 7 verified (0 refused)');
    // The receiver has answered; the sender records each answer just after.
    await vi.waitFor(
      async () => {
        const rows = await t.db.selectFrom('webhook_deliveries').select(['status', 'last_status_code']).where('endpoint_id', '=', result.webhookEndpointId).execute();
        expect(rows).toEqual(Array.from({ length: 7 }, () => ({ status: 'succeeded', last_status_code: 204 })));
      },
      { timeout: 10_000, interval: 50 },
    );

    // A delivery as the service signed it verifies; changed on the way, or checked with another
    // endpoint's secret, it does not, and the receiver answers 401.
    expect(secrets).toHaveLength(1);
    const secret = secrets[0]!;
    const delivered = deliveries.find((delivery) => delivery.body.includes('"type":"payment_request.created"'))!;
    expect(delivered.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifyDelivery(secret, delivered.body, delivered.headers).event).toEqual(JSON.parse(delivered.body));
    const tampered = delivered.body.replace(/"amount":(\d+)/, (_match, amount: string) => `"amount":${Number(amount) * 100}`);
    expect(tampered).not.toBe(delivered.body);
    expect(() => verifyDelivery(secret, tampered, delivered.headers)).toThrow(UnverifiedDelivery);
    expect(() => verifyDelivery(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, delivered.body, delivered.headers)).toThrow(UnverifiedDelivery);
    expect(() => verifyDelivery(secret, delivered.body, { ...delivered.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) })).toThrow(
      UnverifiedDelivery,
    );

    const replay = (body: string) => fetch(hooks.url, { method: 'POST', headers: { 'content-type': 'application/json', ...delivered.headers }, body });
    expect((await replay(tampered)).status).toBe(401);
    expect(hooks.refused).toBe(1);
    // The genuine delivery again (a retry) is accepted and not counted twice.
    expect((await replay(delivered.body)).status).toBe(204);
    expect(hooks.events).toHaveLength(7);
  });

  it('reads refusals as the typed ProblemDetails (and the token endpoint as its OAuth error)', async () => {
    const biller = world.billers[1]!;
    const api = billerClient(baseUrl, biller);
    const notTheEmployee = createMandate(api, {
      employeeId: world.employee.id,
      payrollId: world.payroll.id,
      person: { ...person, family_name: 'Somebody-Else' },
      authorisedAt: new Date(),
      reference: 'LOAN-0002',
    });
    const refusal = await notTheEmployee.catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({
      status: 422,
      code: 'consumer-not-employee',
      problem: { status: 422, errors: expect.arrayContaining([expect.objectContaining({ pointer: '/mandate_record/consumer/family_name' })]) },
    });

    const badSecret = await requestAccessToken(baseUrl, { ...biller, clientSecret: 'not-the-secret' }).catch((error: unknown) => error);
    expect(badSecret).toBeInstanceOf(ApiError);
    expect(badSecret).toMatchObject({ status: 401, code: 'invalid_client' });
  });

  it('runs as its README says: src/main.ts with tsx, as a sandbox biller, for one of the people the sandbox offers', async () => {
    const sandbox = await makeSandbox(t.db, t.config, world.billers[1]!.clientId, { employers: 2, employees: 3 });
    const credentials = sandboxCredentials(sandbox);
    const someone = sandbox.example_employees.find((example) => example.availability_status === 'confirmed')!;
    const env = {
      ...process.env,
      DEDUCTIONS_URL: baseUrl,
      CLIENT_ID: credentials.clientId,
      CLIENT_SECRET: credentials.clientSecret,
      API_KEY: credentials.apiKey,
      PERSON_NATIONAL_REGISTRATION_NUMBER: someone.national_registration_number!,
      PERSON_DATE_OF_BIRTH: someone.date_of_birth!,
      PERSON_GIVEN_NAME: someone.given_name,
      PERSON_FAMILY_NAME: someone.family_name,
    };
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(exampleDir, 'src', 'main.ts')], { cwd: exampleDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as WalkthroughResult;
    expect(result.activeMandate).toMatchObject({ status: 'active', employee_id: someone.employee_id });
    expect(result.retriedPayment.replayed).toBe(true);
    expect(result.events.map((event) => event.type).sort()).toEqual([
      'mandate.created',
      'mandate.updated',
      'payment_request.created',
      'payment_request.created',
      'payment_request.created',
      'payment_request.created',
      'payment_request.updated',
    ]);
    expect(run.stderr).toMatch(/^mandate [0-9a-f-]+: active$/m);
    // Run again and again, it leaves no endpoint behind (a biller may have only so many).
    expect(run.stderr).toContain(`webhook endpoint ${result.webhookEndpointId} removed`);
    const endpoints = await t.db.selectFrom('webhook_endpoints').select(['id', 'deleted_at']).where('biller_client_id', '=', credentials.clientId).execute();
    expect(endpoints).toEqual([{ id: result.webhookEndpointId, deleted_at: expect.any(Date) }]);
  });
});
