import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBiller, createEmploymentWorld } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// Availability checks have a per-biller limit of their own, far below the general per-client one:
// here one a minute with a burst of three.
const AVAILABILITY_LOG_KEY = 'availability-log-key-for-rate-limit-tests-0123456789';

let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ env: { AVAILABILITY_CHECKS_PER_MINUTE: '1', AVAILABILITY_CHECKS_BURST: '3', AVAILABILITY_LOG_KEY } });
});
afterAll(async () => {
  await t.close();
});

describe('the per-biller limit on availability checks', () => {
  it('answers 429 with Retry-After once a biller has used its burst, light and full alike, and records the refusal', async () => {
    const world = await createEmploymentWorld(t.db);
    const person = {
      national_registration_number: world.employee.national_registration_number!,
      date_of_birth: '1988-03-14',
      family_name: world.employee.family_name,
    };
    const biller = await createBiller(t.db);
    const headers = await authHeaders(t.app, biller);
    const check = (kind: 'light' | 'full', h = headers) =>
      injectJson(t.app, { method: 'POST', url: `/deductions/availability/${kind}`, headers: h, body: { availability_check: person } });

    for (const kind of ['full', 'light', 'full'] as const) expect((await check(kind)).statusCode).toBe(200);

    for (const kind of ['full', 'light'] as const) {
      const refused = await check(kind);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      const retryAfter = Number(refused.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const problem = refused.json();
      expect(problem).toMatchObject({ status: 429, rate_limit: 'availability_checks' });
      expect(problem.type).toMatch(/\/rate-limited$/);
      expect(problem).not.toHaveProperty('availability_check');
    }

    // Only availability checks are limited this tightly: the biller's other calls go on.
    const payments = await injectJson(t.app, { method: 'GET', url: '/payments', headers });
    expect(payments.statusCode).toBe(200);

    // Another biller has a bucket of its own.
    const other = await createBiller(t.db);
    expect((await check('full', await authHeaders(t.app, other))).statusCode).toBe(200);

    const hmac = createHmac('sha256', AVAILABILITY_LOG_KEY).update(person.national_registration_number).digest('hex');
    const rows = await t.db
      .selectFrom('availability_lookups')
      .select(['kind', 'outcome', 'national_registration_number_hmac'])
      .where('biller_client_id', '=', biller.clientId)
      .orderBy('checked_at')
      .execute();
    expect(rows).toEqual([
      { kind: 'full', outcome: 'confirmed', national_registration_number_hmac: hmac },
      { kind: 'light', outcome: 'confirmed', national_registration_number_hmac: hmac },
      { kind: 'full', outcome: 'confirmed', national_registration_number_hmac: hmac },
      { kind: 'full', outcome: 'rate_limited', national_registration_number_hmac: hmac },
      { kind: 'light', outcome: 'rate_limited', national_registration_number_hmac: hmac },
    ]);
  });
});
