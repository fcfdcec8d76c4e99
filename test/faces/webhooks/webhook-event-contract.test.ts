import { randomUUID } from 'node:crypto';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { serviceToday } from '../../../src/directory/calendars/lock-date.ts';
import { EVENT_TYPES } from '../../../src/platform/events/event-resource.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { startWebhookReceiver, type ReceivedDelivery, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { runNightlyNow } from '../../../src/faces/workers/nightly-runner.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { runMatching } from '../../../src/settlement/cash/matching-service.ts';
import { runPayouts } from '../../../src/settlement/payouts/payout-service.ts';
import { cashPolicy } from '../../support/cash.ts';
import {
  createBiller,
  createCollectionAccount,
  createEmployee,
  createEmployer,
  createOperator,
  createPayroll,
  createPayrollProvider,
  createProviderClient,
  futureMonthlyPayDates,
} from '../../support/factories.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';
import { dispatch, registerEndpoint, until } from './webhook-test-kit.ts';

// Issue 35 item 1: every event the service delivers validates against the schema /openapi.json
// publishes for its type. Real flows (the HTTP API wherever it exists, the services and workers
// otherwise) produce every event type of EVENT_TYPES for one biller, whose endpoint at a real
// receiver takes every event; each verified delivery, and each event GET /events lists, is then
// validated by Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1) against the document the
// running app serves. A new event type without a flow here fails the test by name.

const payDates = futureMonthlyPayDates(4);
const [PD1, PD2, PD3] = [payDates[0]!, payDates[1]!, payDates[2]!];
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
/** The collection account the statements are of (createCollectionAccount): sort code 04-00-04, account 41234978. */
const COLLECTION_ACCOUNT = { sortCode: '04-00-04', accountNumber: '41234978' };
const DOCUMENT_ID = 'https://contract.test/openapi.json';

type Headers = Record<string, string>;
type Person = Awaited<ReturnType<typeof createEmployee>>;
interface EventBody {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}
interface OpenApiDocument {
  openapi: string;
  webhooks?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: unknown }> } } }>;
  components: { schemas: Record<string, unknown> };
}

let t: TestApp;
let host: WorkerHost;
let receiver: WebhookReceiver;
let biller: { clientId: string; headers: Headers };
let provider: Headers;
let operator: Headers;
let payrollId: string;
let goneEndpointId: string;
let openapi: OpenApiDocument;
let ajv: InstanceType<typeof Ajv2020>;
/** What the service recorded for the biller, in order: every one of them must reach the receiver. */
let recorded: Array<{ id: string; type: string }>;
/** GET /events, every page. */
let listed: EventBody[];

// ---- The API, as the biller, payroll provider and operator call it ----

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, body?: object, expected = method === 'POST' ? [200, 201] : [200]) {
  const idempotent: Headers = method === 'POST' ? { 'idempotency-key': randomUUID() } : {};
  const response = await injectJson(t.app, { method, url, headers: { ...headers, ...idempotent }, body });
  expect(expected, `${method} ${url} answered ${response.statusCode}: ${response.body}`).toContain(response.statusCode);
  return response.json();
}

/** A mandate of the biller on the person, created through the API and enabled through the API (mandate.created, mandate.updated). */
async function liveMandate(person: Person, extra: Record<string, unknown> = {}): Promise<string> {
  const created = await call('POST', '/mandates', biller.headers, {
    mandate_record: {
      employee_id: person.employee.id,
      payroll_id: payrollId,
      consumer: { given_name: person.employee.given_name, family_name: person.employee.family_name, date_of_birth: person.employee.date_of_birth },
      authorisation_source: { type: 'online', reference: `consent-${person.employee.family_name}`, authorised_at: '2026-01-15T10:30:00+01:00' },
      ...extra,
    },
  });
  const mandateId = created.mandate.id as string;
  const enabled = await call('POST', '/deductions/enablement', biller.headers, {
    enablement: { employee_id: person.employee.id, payroll_id: payrollId, mandate_id: mandateId },
  });
  expect(enabled.enablement.status).toBe('enabled');
  return mandateId;
}

async function payment(mandateId: string, amount: number, extra: Record<string, unknown> = {}): Promise<{ id: string; target_pay_date: string }> {
  const created = await call('POST', '/payments', biller.headers, { payment_record: { mandate_id: mandateId, amount, ...extra } });
  return created.payment;
}

async function schedule(mandateId: string, instalments: Array<{ amount: number; due_date: string }>, metadata: Record<string, unknown> | null = null) {
  const created = await call('POST', '/schedules', biller.headers, { schedule_record: { mandate_id: mandateId, instalments, metadata } });
  return created.schedule as { id: string; instalments: Array<{ payment_id: string; target_pay_date: string }> };
}

/** What payroll deducted from one employee on PD1, in major units, as the provider pushes it. */
async function push(person: Person, deducted: number) {
  await call('POST', `/deductions/payroll/${payrollId}`, provider, {
    pay_period: PD1.pay_period,
    id: `REC-${randomUUID()}`,
    version: 1,
    salary_deduction: { employee_id: person.employee.id, deduction_amount: deducted, currency: 'GBP' },
  });
}

/** The provider's PUT of an employee: the whole employment record, with `changes` over what the factory made. */
async function putEmployee(person: Person, changes: Record<string, unknown>) {
  await call('PUT', `/payrolls/${payrollId}/employees/${person.employee.id}`, provider, {
    employee: {
      given_name: person.employee.given_name,
      family_name: person.employee.family_name,
      date_of_birth: person.employee.date_of_birth,
      email_address: person.employee.email_address,
      payroll_reference: person.employment.payroll_reference,
      start_date: person.employment.start_date,
      employment_status: person.employment.employment_status,
      contract_type: person.employment.contract_type,
      annualised_salary: person.employment.annualised_salary,
      ...changes,
    },
  });
}

async function paymentStatus(id: string) {
  return (await call('GET', `/payments/${id}`, biller.headers)).payment as { status: string; target_pay_date: string; paid_out_amount: number };
}

async function importStatement(body: string, contentType: string, fileName: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: `/bank-statements?file_name=${fileName}`,
    headers: { ...operator, 'content-type': contentType },
    payload: body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

// ---- The flows ----

async function produceEveryEventType() {
  const providerRow = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, providerRow.id);
  const payroll = await createPayroll(t.db, { providerId: providerRow.id, employerId: employer.id, payDates });
  payrollId = payroll.id;
  const person = () => createEmployee(t.db, { providerId: providerRow.id, payrollId, employerId: employer.id });
  const [collects, partly, fails, carries, revoked, leaves] = [await person(), await person(), await person(), await person(), await person(), await person()];
  provider = await authHeaders(t.app, await createProviderClient(t.db, providerRow.id));
  operator = await authHeaders(t.app, await createOperator(t.db));
  await call('POST', `/admin/billers/${biller.clientId}/beneficiary-accounts`, operator, {
    currency: 'GBP',
    sort_code: '60-16-13',
    account_number: '31926819',
    account_holder_name: 'Contract Lending Ltd',
    reason: 'onboarding',
  });

  // Mandates (mandate.created), enabled (mandate.updated); payment requests (payment_request.created,
  // written by SQL) and schedules, their instalments payment requests of their own.
  const mandateA = await liveMandate(collects, { limitations: { max_amount_per_pay_date: 50_000 }, reference: 'AGR-CONTRACT-1', metadata: { agreement: 'AGR-1' } });
  const mandateB = await liveMandate(partly);
  const mandateC = await liveMandate(fails);
  const mandateD = await liveMandate(carries);
  const mandateE = await liveMandate(revoked);
  const mandateG = await liveMandate(leaves);
  const paymentA = await payment(mandateA, 10_000, { metadata: { invoice: 'INV-1', lines: [1, 2] } });
  const completes = await schedule(mandateA, [{ amount: 5_000, due_date: PD1.pay_date }], { agreement: 'AGR-1' });
  const paymentB = await payment(mandateB, 10_000, { due_date: PD1.pay_date });
  const paymentC = await payment(mandateC, 8_000);
  const paymentD = await payment(mandateD, 6_000, { allow_post_due_date_deduction: true });
  expect([paymentA, paymentB, paymentC, paymentD].map((p) => p.target_pay_date)).toEqual([PD1.pay_date, PD1.pay_date, PD1.pay_date, PD1.pay_date]);

  // The biller cancels a payment request and a schedule (payment_request.updated, schedule.updated).
  const cancelled = await payment(mandateA, 2_500);
  await call('POST', `/payments/${cancelled.id}/cancel`, biller.headers);
  const cancelledSchedule = await schedule(mandateA, [
    { amount: 3_000, due_date: PD2.pay_date },
    { amount: 3_000, due_date: PD3.pay_date },
  ]);
  expect((await call('POST', `/schedules/${cancelledSchedule.id}/cancel`, biller.headers)).schedule).toMatchObject({ status: 'cancelled' });

  // A mandate revoked with a payment request and a schedule open: the mandate, the payments and the
  // schedule (settled in SQL, mandate_revoked) change together.
  await payment(mandateE, 4_000);
  const revokedSchedule = await schedule(mandateE, [
    { amount: 2_000, due_date: PD1.pay_date },
    { amount: 2_000, due_date: PD2.pay_date },
  ]);
  await call('DELETE', `/mandates/${mandateE}`, biller.headers);
  expect((await call('GET', `/schedules/${revokedSchedule.id}`, biller.headers)).schedule).toMatchObject({ status: 'cancelled', status_reason: 'mandate_revoked' });

  // Payroll changes employments on a payroll with live mandates (employee.updated): a salary, and a
  // leaver, whose mandate ends and takes its open payment request and schedule with it.
  await putEmployee(collects, { annualised_salary: 3_900_000 });
  await payment(mandateG, 3_000);
  const endedSchedule = await schedule(mandateG, [{ amount: 1_500, due_date: PD2.pay_date }]);
  await putEmployee(leaves, { employment_status: 'leaver', end_date: addDays(serviceToday(new Date(), t.config.SERVICE_TIME_ZONE), -1) });
  expect((await call('GET', `/schedules/${endedSchedule.id}`, biller.headers)).schedule).toMatchObject({ status: 'cancelled', status_reason: 'mandate_ended' });

  // The nightly run locks PD1 on its lock date (payment_request.updated written by the lock's SQL:
  // instructed), and makes the pay date's expected remittance.
  const nightly = await runNightlyNow(runtimeOf(t), PD1.lock_date, { workers: host, pollMs: 50 });
  expect(nightly).toMatchObject({ payrollsLocked: 1, paymentsInstructed: 5, failures: [], skipped: [] });

  // Payroll reports (the push API); the debounced reconciliation job writes, in SQL, the
  // collected, partly collected, failed and carried payment requests and the completed schedule.
  await push(collects, 150);
  await push(partly, 40);
  await push(fails, 0);
  await push(carries, 0);
  await until(
    () => Promise.all([paymentA, paymentB, paymentC, paymentD].map((p) => paymentStatus(p.id))),
    (statuses) => statuses.map((s) => s.status).join() === 'collected,partially_collected,failed,pending',
    20_000,
  );
  expect((await paymentStatus(paymentD.id)).target_pay_date).toBe(PD2.pay_date);
  expect((await call('GET', `/schedules/${completes.id}`, biller.headers)).schedule).toMatchObject({ status: 'completed', status_reason: 'all_instalments_collected' });

  // The employer's remittance arrives on a CSV statement and the rules match it (remittance.received).
  const expected = 15_000 + 4_000;
  const remittance = await until(
    async () => (await call('GET', `/remittances/${payrollId}/${PD1.pay_date}`, operator)).remittance as { payment_reference: string; expected: number },
    (r) => r.expected === expected,
  );
  const today = serviceToday(new Date(), t.config.SERVICE_TIME_ZONE);
  const csv = [
    'statement_id,sort_code,account_number,currency,bank_reference,booking_date,value_date,direction,amount,reference,debtor_name,debtor_account',
    `CONTRACT-CSV-1,${COLLECTION_ACCOUNT.sortCode},${COLLECTION_ACCOUNT.accountNumber},GBP,CR-CONTRACT-000001,${today},${today},credit,${(expected / 100).toFixed(2)},${remittance.payment_reference},Employer Ltd,`,
  ].join('\n');
  const received = await importStatement(csv, 'text/csv', 'contract.csv');
  expect(received.matching).toMatchObject({ matches: 1 });

  // Payouts of what was received (payout.created; payment_request.updated written by the payout's SQL).
  const payouts = await runPayouts(t.db, { today: addDays(PD1.pay_date, 7), funding: 'received', settlementDelayWorkingDays: 1, holidays: new Set() });
  expect(payouts.totalsByCurrency).toEqual({ GBP: expected });
  expect((await paymentStatus(paymentA.id)).status).toBe('paid_out');

  // The bank takes the credit back on a camt.053 (remittance.reversed: a shortfall, since it was paid out).
  const reversal = camt053Reversal('CONTRACT-CAMT-1', expected, today, 'CR-CONTRACT-000001');
  const reversed = await importStatement(reversal, 'application/xml', 'contract.xml');
  expect(reversed.reversals).toMatchObject({ applied: 1 });

  // Nothing arrives again before the due date: the daily matching run notes it overdue (remittance.overdue).
  await runMatching(t.db, cashPolicy(addDays(PD1.pay_date, 14)));
}

/** A camt.053 of one booked debit reversing the credit whose bank reference it quotes. */
function camt053Reversal(statementId: string, amountMinor: number, bookingDate: string, creditReference: string): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">',
    '<BkToCstmrStmt><GrpHdr><MsgId>CONTRACT-MSG-1</MsgId><CreDtTm>2026-01-01T22:00:00</CreDtTm></GrpHdr>',
    `<Stmt><Id>${statementId}</Id>`,
    `<Acct><Id><Othr><Id>${COLLECTION_ACCOUNT.sortCode.replaceAll('-', '')}${COLLECTION_ACCOUNT.accountNumber}</Id></Othr></Id><Ccy>GBP</Ccy></Acct>`,
    `<Ntry><NtryRef>${creditReference}</NtryRef><Amt Ccy="GBP">${(amountMinor / 100).toFixed(2)}</Amt><CdtDbtInd>DBIT</CdtDbtInd><RvslInd>true</RvslInd>`,
    `<Sts>BOOK</Sts><BookgDt><Dt>${bookingDate}</Dt></BookgDt><ValDt><Dt>${bookingDate}</Dt></ValDt><AcctSvcrRef>RV-CONTRACT-000001</AcctSvcrRef></Ntry>`,
    '</Stmt></BkToCstmrStmt></Document>',
  ].join('\n');
}

/** Dispatches until the endpoint that answers 410 is disabled and every event recorded for the biller reached the receiver. */
async function deliverEverything(): Promise<Array<{ id: string; type: string }>> {
  const deliveries = host.queues[queueNames.webhookDeliveries];
  const deadline = Date.now() + 30_000;
  for (;;) {
    await dispatch(t.db, deliveries);
    const events = await t.db.selectFrom('events').select(['id', 'type']).where('biller_client_id', '=', biller.clientId).orderBy('sequence').execute();
    const gone = await t.db.selectFrom('webhook_endpoints').select('status').where('id', '=', goneEndpointId).executeTakeFirstOrThrow();
    const delivered = new Set(receiver.deliveries.filter((d) => d.verified && d.path === '/hooks').map((d) => d.webhookId));
    const missing = events.filter((event) => !delivered.has(event.id));
    if (gone.status === 'disabled' && missing.length === 0) return events;
    if (Date.now() > deadline) {
      throw new Error(`not delivered within 30 s (endpoint answering 410: ${gone.status}): ${missing.map((e) => `${e.type} ${e.id}`).join(', ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function listEvents(): Promise<EventBody[]> {
  const events: EventBody[] = [];
  let after: string | null = null;
  do {
    const page: { events: EventBody[]; paging: { after: string | null } } = await call(
      'GET',
      `/events?limit=500${after === null ? '' : `&after=${encodeURIComponent(after)}`}`,
      biller.headers,
    );
    events.push(...page.events);
    after = page.paging.after;
  } while (after !== null);
  return events;
}

// ---- The published schemas ----

const pointerSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** Ajv's validator of the schema /openapi.json publishes for a webhook event type; undefined when none is. */
function webhookValidator(type: string): ValidateFunction | undefined {
  if (openapi.webhooks?.[type]?.post?.requestBody?.content?.['application/json']?.schema === undefined) return undefined;
  return ajv.getSchema(`${DOCUMENT_ID}#/webhooks/${pointerSegment(type)}/post/requestBody/content/application~1json/schema`);
}

function eventValidator(): ValidateFunction {
  const validate = ajv.getSchema(`${DOCUMENT_ID}#/components/schemas/Event`);
  if (!validate) throw new Error('/openapi.json publishes no Event schema');
  return validate;
}

const describeErrors = (errors: readonly ErrorObject[] | null | undefined) =>
  (errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);

/** What Ajv finds wrong with `value`, one line per error (path, message, parameters); empty when it validates. */
function problemsOf(validate: ValidateFunction, value: unknown): string[] {
  return validate(value) ? [] : describeErrors(validate.errors);
}

const verifiedBodies = () =>
  receiver.deliveries.filter((d): d is ReceivedDelivery & { webhookId: string } => d.verified).map((d) => ({ delivery: d, body: JSON.parse(d.body) as EventBody }));

beforeAll(async () => {
  t = await startTestApp({ env: { RATE_LIMIT_PER_SECOND: '1000', RATE_LIMIT_BURST: '1000', RECONCILIATION_DEBOUNCE_MS: '100' } });
  await createCollectionAccount(t.db);
  host = await composition.startWorkers(runtimeOf(t), { schedule: false });
  const credentials = await createBiller(t.db);
  biller = { clientId: credentials.clientId, headers: await authHeaders(t.app, credentials) };

  // One endpoint takes every event; another, answering 410 Gone, is disabled at its first delivery
  // and the first one hears of it (webhook_endpoint.disabled).
  receiver = await startWebhookReceiver({ respond: (delivery) => ({ status: delivery.path === '/gone' ? 410 : 204 }) });
  await registerEndpoint(t, biller.headers, receiver);
  goneEndpointId = (await registerEndpoint(t, biller.headers, receiver, { path: '/gone', eventTypes: ['mandate.created'] })).id;

  await produceEveryEventType();
  recorded = await deliverEverything();
  listed = await listEvents();

  const served = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(served.statusCode).toBe(200);
  openapi = served.json();
  // Strict: a keyword Ajv does not know fails the compile, except OpenAPI's `example` (and the two
  // members of the document the schemas are read from).
  ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addVocabulary(['example', 'components', 'webhooks']);
  // The published payloads are open to fields a later minor release adds; what this version delivers
  // is held to exactly the published fields, so an undocumented field fails here.
  ajv.addSchema({ $id: DOCUMENT_ID, components: closed(openapi.components), webhooks: closed(openapi.webhooks ?? {}) });
}, 120_000);

/** The schemas with every object that lists its properties closed to others (`additionalProperties: false`). */
function closed(node: unknown): any {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === 'example' ? value : closed(value);
  if (out.type === 'object' && out.properties !== undefined && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

afterAll(async () => {
  await host?.close();
  await receiver?.close();
  await t?.close();
});

describe('the webhook contract', () => {
  it('every event the service delivers validates against its published schema', () => {
    expect(openapi.openapi).toMatch(/^3\.1\./);
    const typeOf = new Map(recorded.map((event) => [event.id, event.type]));
    const failures: string[] = [];
    const checked: Record<string, number> = {};
    for (const { delivery, body } of verifiedBodies()) {
      const label = `${body.type} event ${body.id} (delivered to ${delivery.path})`;
      if (typeOf.get(delivery.webhookId) !== body.type) failures.push(`${label}: the webhook-id ${delivery.webhookId} is a ${typeOf.get(delivery.webhookId)} event`);
      const validate = webhookValidator(body.type);
      if (!validate) {
        failures.push(`${label}: /openapi.json publishes no webhooks["${body.type}"] request body schema`);
        continue;
      }
      failures.push(...problemsOf(validate, body).map((error) => `${label}: ${error}`));
      checked[body.type] = (checked[body.type] ?? 0) + 1;
    }
    expect(failures).toEqual([]);
    // Every request the receiver got carried a valid signature: none of them escaped the check above.
    expect(receiver.deliveries.filter((delivery) => !delivery.verified).map((delivery) => delivery.error)).toEqual([]);

    // Every event recorded was delivered (deliverEverything waited for it), and every type was among them.
    const neverDelivered = EVENT_TYPES.filter((type) => !recorded.some((event) => event.type === type));
    expect(neverDelivered, `event types no flow of this test produced: ${neverDelivered.join(', ')}`).toEqual([]);
    for (const type of EVENT_TYPES) expect(checked[type] ?? 0, `deliveries of ${type} checked`).toBeGreaterThan(0);
    // Payment requests changed by each statement that writes their events in SQL (the lock, the
    // reconciliation, the payout run) and by the TypeScript of cancels, revocations and leavers.
    const paymentStatuses = verifiedBodies()
      .filter(({ body }) => body.type === 'payment_request.updated')
      .map(({ body }) => body.data.status);
    expect(paymentStatuses).toEqual(expect.arrayContaining(['instructed', 'collected', 'partially_collected', 'failed', 'pending', 'paid_out', 'cancelled']));
  });

  it('every event GET /events lists validates against the published Event schema, and is what its webhook carried', () => {
    const validate = eventValidator();
    const failures = listed.flatMap((event) => problemsOf(validate, event).map((error) => `${event.type} event ${event.id}: ${error}`));
    expect(failures).toEqual([]);
    expect(listed.map((event) => event.id).sort()).toEqual(recorded.map((event) => event.id).sort());
    const delivered = new Map(verifiedBodies().map(({ delivery, body }) => [delivery.webhookId, body]));
    for (const event of listed) expect(event, `GET /events item ${event.id}`).toEqual(delivered.get(event.id));
  });

  it('the validator refuses a delivered body altered against the schema', () => {
    const original = verifiedBodies().find(({ body }) => body.type === 'payment_request.updated' && body.data.status === 'partially_collected')!.body;
    const validate = webhookValidator('payment_request.updated')!;
    const event = eventValidator();
    expect(problemsOf(validate, original)).toEqual([]);

    const withoutAmount = structuredClone(original);
    delete withoutAmount.data.amount;
    expect(validate(withoutAmount)).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ instancePath: '/data', keyword: 'required', params: { missingProperty: 'amount' } }));
    expect(event(withoutAmount)).toBe(false);

    const unknownStatus = structuredClone(original);
    unknownStatus.data.status = 'teleported';
    expect(validate(unknownStatus)).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ instancePath: '/data/status', keyword: 'enum' }));
    expect(event(unknownStatus)).toBe(false);

    const extraField = structuredClone(original);
    extraField.data.collected_at = extraField.created_at;
    expect(validate(extraField)).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ instancePath: '/data', keyword: 'additionalProperties' }));

    const badInstant = structuredClone(original);
    badInstant.created_at = '2026-11-28 02:00:04';
    expect(validate(badInstant)).toBe(false);
    expect(validate.errors).toContainEqual(expect.objectContaining({ instancePath: '/created_at', keyword: 'format' }));
  });
});
