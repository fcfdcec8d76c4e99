import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { instructionFileColumns } from '../../../src/cycle/instructions/instruction-file.ts';
import { API_VERSION } from '../../../src/faces/http/api-version.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { publishedWebhooks } from '../../../src/faces/webhooks/webhook-event-schemas.ts';
import { EVENT_TYPES } from '../../../src/platform/events/event-resource.ts';
import { SUPPORTED_CURRENCIES } from '../../../src/platform/money/currency.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type Credentials, type TestApp } from '../../support/test-app.ts';

// What an integrator reads in /openapi.json and gets from the service: the version, the webhook
// events, the interface document's schema names, defaults and enums, examples in the formats the
// service issues; DELETE /payments; Idempotency-Key on the availability checks.

const repositoryRoot = new URL('../../..', import.meta.url).pathname;

let t: TestApp;
let document: any;
let biller: Credentials;
let headers: Record<string, string>;
let world: Awaited<ReturnType<typeof createEmploymentWorld>>;

beforeAll(async () => {
  t = await startTestApp();
  document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
  world = await createEmploymentWorld(t.db);
});
afterAll(async () => t?.close());

const schemas = () => document.components.schemas as Record<string, any>;

function valuesOf(node: unknown, key: string, found: unknown[] = []): unknown[] {
  if (Array.isArray(node)) node.forEach((child) => valuesOf(child, key, found));
  else if (node && typeof node === 'object') {
    for (const [name, value] of Object.entries(node)) {
      if (name === key && typeof value === 'string') found.push(value);
      valuesOf(value, key, found);
    }
  }
  return found;
}

describe('the version', () => {
  it('is the same in info.version, the API-Version header of answers and refusals, and the newest heading of the API changelog', async () => {
    expect(document.info.version).toBe(API_VERSION);
    const ok = await t.app.inject({ method: 'GET', url: '/health' });
    const refused = await t.app.inject({ method: 'GET', url: '/mandates' });
    expect(refused.statusCode).toBe(401);
    // Refused by the router before any hook runs.
    const badUrl = await t.app.inject({ method: 'GET', url: '/payments/%E0%A4%A' });
    expect(badUrl.statusCode).toBe(400);
    for (const response of [ok, refused, badUrl]) expect(response.headers['api-version']).toBe(API_VERSION);
    const changelog = readFileSync(`${repositoryRoot}docs/api-changelog.md`, 'utf8');
    expect(/^## (\d+\.\d+\.\d+)$/m.exec(changelog)?.[1]).toBe(API_VERSION);
  });
});

describe('webhooks in /openapi.json', () => {
  it('publishes every event type, once, as a POST whose body is the payload schema of its family, with an example of that type', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const media = document.webhooks[type].post.requestBody.content['application/json'];
      const payload = schemas()[media.schema.$ref.replace('#/components/schemas/', '')];
      expect(payload.properties.type.enum ?? [payload.properties.type.const], type).toContain(type);
      expect(media.example.type).toBe(type);
      expect(document.webhooks[type].post.parameters.map((p: { name: string }) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    }
    for (const name of ['WebhookMandatePayload', 'WebhookPaymentRequestPayload', 'WebhookPayoutPayload', 'WebhookEmployeeUpdatePayload']) {
      expect(schemas()[name], name).toBeDefined();
    }
  });

  it("shows each event type's resource as it is at that event, under an event id of its own", () => {
    const exampleOf = (type: string) => document.webhooks[type].post.requestBody.content['application/json'].example;
    expect(exampleOf('mandate.created').data).toMatchObject({ status: 'pending_enablement', version: 1 });
    expect(exampleOf('payout.created').data).toMatchObject({ status: 'pending', paid_at: null, version: 1 });
    expect(exampleOf('payment_request.updated').data.status).not.toBe(exampleOf('payment_request.created').data.status);
    expect(exampleOf('schedule.updated').data).toMatchObject({ status: 'completed', status_reason: 'all_instalments_collected', expected_payments: [] });
    expect(exampleOf('webhook_endpoint.disabled').data.status).toBe('disabled');
    expect(exampleOf('remittance.overdue').data.status).toBe('late');
    expect(exampleOf('remittance.reversed').data.status).toBe('shortfall');
    expect(new Set(EVENT_TYPES.map((type) => exampleOf(type).id)).size).toBe(EVENT_TYPES.length);
  });

  it('leaves what only the service writes open to fields a minor release adds, and what clients send closed', () => {
    for (const name of ['PaymentResponse', 'MandateRecordResponse', 'WebhookPaymentRequestPayload', 'ScheduleResponse']) {
      expect(JSON.stringify(schemas()[name]), name).not.toContain('"additionalProperties":false');
    }
    expect(schemas().PaymentRecordRequest.additionalProperties).toBe(false);
  });

  it('has examples the payload schemas accept, and an Event that is exactly one of the payloads', () => {
    for (const webhook of publishedWebhooks) {
      const result = webhook.payload.safeParse(webhook.example);
      expect(result.success, `${webhook.type}: ${result.success ? '' : JSON.stringify(z.treeifyError(result.error))}`).toBe(true);
    }
    const members = schemas().Event.oneOf.map((member: { $ref: string }) => member.$ref.replace('#/components/schemas/', ''));
    expect(new Set(members)).toEqual(
      new Set(
        publishedWebhooks.map((webhook) => document.webhooks[webhook.type].post.requestBody.content['application/json'].schema.$ref.replace('#/components/schemas/', '')),
      ),
    );
  });
});

describe("the interface document's schemas", () => {
  it('are published under its names, with the former names as aliases of the same schema', () => {
    for (const name of ['ExpectedPayment', 'PaymentDeleteResponse', 'AvailabilityStatus', 'Employee', 'BeneficiaryAccountResponse', 'Currency']) {
      expect(schemas()[name], name).toBeDefined();
    }
    expect(schemas().EmployeePayroll.$ref).toBe('#/components/schemas/Employee');
    expect(schemas().BeneficiaryAccount.$ref).toBe('#/components/schemas/BeneficiaryAccountResponse');
    expect(schemas().AvailabilityStatus.enum).toEqual(['confirmed', 'not_found', 'not_eligible', 'pending_employer_opt_in']);
    // Both checks' status is the named enum, not an inline copy of it.
    for (const name of ['FullAvailabilityCheckResponse', 'LightAvailabilityCheckResponse']) {
      expect(schemas()[name].properties.availability_check.properties.availability_status.$ref, name).toBe('#/components/schemas/AvailabilityStatus');
    }
  });

  it('give the defaults as `default` and the supported currencies as an enum', () => {
    const record = schemas().PaymentRecordRequest ?? schemas().PaymentRecordRequestInput;
    expect(record.properties.allow_post_due_date_deduction.default).toBe(false);
    expect(JSON.stringify(record.properties.currency)).toContain('"default":"GBP"');
    expect(schemas().Currency.enum).toEqual([...SUPPORTED_CURRENCIES]);
    expect(schemas().Currency.enum).toHaveLength(55);
  });

  it('show payment references in the formats the service issues', () => {
    const references = valuesOf(document, 'payment_reference');
    expect(references.length).toBeGreaterThan(3);
    for (const reference of references) {
      // SD + the deduction number (8 to 15 digits); SDR + pay date + P + 8 digits; PO + payout date + 10.
      expect(reference).toMatch(/^(SD\d{8,15}|SDR\d{6}P\d{8}|PO\d{6}[0-9A-F]{10})$/);
    }
  });

  it('show an instruction file whose every record has every column: one header, the items, one trailer that counts and sums them', () => {
    const operation = document.paths['/deductions/{payroll_id}/instruction-file'].get;
    const csv = operation.responses['200'].content['text/csv'].schema.example as string;
    const records = parse(csv, { columns: true }) as Array<Record<string, string>>;
    expect(Object.keys(records[0]!)).toEqual([...instructionFileColumns]);
    expect(records.map((record) => record.record_type)).toEqual(['header', 'item', 'item', 'trailer']);
    const items = records.filter((record) => record.record_type === 'item');
    const trailer = records.at(-1)!;
    expect(Number(trailer.line_count)).toBe(items.length);
    expect(trailer.total_amount).toBe('100.50');
    expect(operation.responses['200'].content['text/csv'].schema.description).toMatch(/`header`.*`item`.*`trailer`/s);
  });
});

describe('DELETE /payments/{payment_id}', () => {
  async function newPayment() {
    const mandate = await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id });
    const created = await injectJson(t.app, {
      method: 'POST',
      url: '/payments',
      headers: { ...headers, 'idempotency-key': randomUUID() },
      body: { payment_record: { mandate_id: mandate.id, amount: 1500 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().payment as { id: string; currency: string; allow_post_due_date_deduction: boolean };
  }
  const eventsOf = (id: string) => t.db.selectFrom('events').select('type').where('resource_id', '=', id).orderBy('created_at').execute();

  it('ends a pending payment request as cancelled, keeps it, and answers a repeat the same without a second event', async () => {
    const payment = await newPayment();
    // The defaults the reference states are what the service applied.
    expect(payment).toMatchObject({ currency: 'GBP', allow_post_due_date_deduction: false });
    const deleted = await injectJson(t.app, { method: 'DELETE', url: `/payments/${payment.id}`, headers });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json().payment).toMatchObject({ id: payment.id, status: 'cancelled' });
    expect(await eventsOf(payment.id)).toEqual([{ type: 'payment_request.created' }, { type: 'payment_request.updated' }]);

    const again = await injectJson(t.app, { method: 'DELETE', url: `/payments/${payment.id}`, headers });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(deleted.json());
    expect(await eventsOf(payment.id)).toHaveLength(2);
    const read = await injectJson(t.app, { method: 'GET', url: `/payments/${payment.id}`, headers });
    expect(read.json().payment.status).toBe('cancelled');
  });

  it('refuses one payroll was already instructed to deduct (409), and an unknown one (404)', async () => {
    const payment = await newPayment();
    await t.db.updateTable('payment_requests').set({ status: 'instructed' }).where('id', '=', payment.id).execute();
    const refused = await injectJson(t.app, { method: 'DELETE', url: `/payments/${payment.id}`, headers });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().type).toBe(`${PROBLEM_TYPE_BASE}payment-not-cancellable`);
    const unknown = await injectJson(t.app, { method: 'DELETE', url: `/payments/${randomUUID()}`, headers });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('Idempotency-Key on the availability checks', () => {
  const person = () => ({
    availability_check: { national_registration_number: world.employee.national_registration_number, date_of_birth: '1988-03-14', family_name: world.employee.family_name },
  });
  const lookups = async () =>
    Number(
      (
        await t.db
          .selectFrom('availability_lookups')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('answers a retry with the same key with the first answer, without asking again, and kept for a day only', async () => {
    for (const kind of ['light', 'full'] as const) {
      const key = randomUUID();
      const before = await lookups();
      const first = await injectJson(t.app, { method: 'POST', url: `/deductions/availability/${kind}`, headers: { ...headers, 'idempotency-key': key }, body: person() });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const retry = await injectJson(t.app, { method: 'POST', url: `/deductions/availability/${kind}`, headers: { ...headers, 'idempotency-key': key }, body: person() });
      expect(retry.statusCode).toBe(200);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.headers['cache-control']).toBe('no-store');
      expect(retry.body).toBe(first.body);
      expect(await lookups(), `${kind}: one check asked and recorded`).toBe(before + 1);
      const stored = await t.db.selectFrom('idempotency_keys').select(['expires_at']).where('idempotency_key', '=', key).executeTakeFirstOrThrow();
      const hours = (new Date(stored.expires_at).getTime() - Date.now()) / 3_600_000;
      expect(hours).toBeGreaterThan(23);
      expect(hours).toBeLessThanOrEqual(24);
    }
  });

  it('refuses the key reused for another question (422), a key that is not a UUID (400), and asks afresh without a key', async () => {
    const key = randomUUID();
    const first = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers: { ...headers, 'idempotency-key': key }, body: person() });
    expect(first.statusCode).toBe(200);
    const other = { availability_check: { ...person().availability_check, family_name: 'Someone-Else' } };
    const reused = await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers: { ...headers, 'idempotency-key': key }, body: other });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().type).toBe(`${PROBLEM_TYPE_BASE}idempotency-key-reused`);
    const malformed = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/availability/light',
      headers: { ...headers, 'idempotency-key': 'not-a-uuid' },
      body: person(),
    });
    expect(malformed.statusCode).toBe(400);
    const before = await lookups();
    await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers, body: person() });
    await injectJson(t.app, { method: 'POST', url: '/deductions/availability/light', headers, body: person() });
    expect(await lookups()).toBe(before + 2);
  });

  it('documents the key on both checks, with its retention', () => {
    for (const path of ['/deductions/availability/full', '/deductions/availability/light']) {
      const parameter = document.paths[path].post.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
      expect(parameter, path).toMatchObject({ in: 'header', required: false });
      expect(parameter.description).toContain('24 hours');
    }
  });
});

describe('the deprecated schemas of the interface document', () => {
  it('are each named in the integrators guide with what became of it', () => {
    const guide = readFileSync(`${repositoryRoot}docs/integrators.md`, 'utf8');
    for (const name of ['Invitation', 'Consumer', 'PaymentMethod', 'ProductPaymentStatus', 'ProductStatus', 'PaymentRequestData']) {
      expect(guide, name).toMatch(new RegExp(`^\\| \`${name}\` \\| .+ \\|$`, 'm'));
    }
  });
});
