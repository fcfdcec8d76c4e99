import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knownProblem } from '../../../src/faces/http/plugins/errors.ts';
import type { ProviderConnection } from '../../../src/directory/payroll-providers/adapter.ts';
import { createHttpAdapter, httpAdapterFactory, type HttpAdapterOptions } from '../../../src/directory/payroll-providers/http-adapter.ts';
import { ProviderError, ProviderNotFoundError } from '../../../src/directory/payroll-providers/provider-errors.ts';
import {
  employeePushResponseSchema,
  enablementResponseSchema,
  fullAvailabilityResponseSchema,
  lightAvailabilityResponseSchema,
  payrollScheduleResponseSchema,
  type EmployeePushRecord,
  type PayrollScheduleResponse,
} from '../../../src/directory/payroll-providers/reference-schemas.ts';
import { generateSandboxDirectory } from '../../../src/faces/sandbox/sandbox-directory.ts';
import { startSandboxProvider, type RunningSandboxProvider } from '../../../src/faces/http/sandbox-server.ts';

const CLIENT_SECRET = 'sandbox-client-secret-1234';
const directory = generateSandboxDirectory({ seed: 'http-adapter-tests', employers: 3, payrollsPerEmployer: 2, employeesPerPayroll: 6, today: '2026-11-22' });
const employee = directory.employees[0]!; // the first employment of the first payroll: active, opted-in employer
const employment = employee.employments[0]!;
const payroll = directory.payrolls.find((p) => p.id === employment.payroll_id)!;

let sandbox: RunningSandboxProvider;
beforeAll(async () => {
  sandbox = await startSandboxProvider({ directory, clientId: 'service-client', clientSecret: CLIENT_SECRET });
});
afterAll(async () => sandbox.close());

function sandboxConnection(overrides: Partial<ProviderConnection> = {}): ProviderConnection {
  return {
    id: 'c5b9d3c2-4a54-4a8e-9c39-5d0a0b7f7c11',
    api_base_url: sandbox.url,
    api_token_url: sandbox.tokenUrl,
    api_client_id: 'service-client',
    api_client_secret: CLIENT_SECRET,
    ...overrides,
  };
}

/** fetch that records every request it sends: url, method and headers. */
function recordingFetch() {
  const requests: Array<{ url: string; method: string; headers: Record<string, string> }> = [];
  const wrapped: typeof fetch = (input, init) => {
    requests.push({ url: String(input), method: init?.method ?? 'GET', headers: { ...(init?.headers as Record<string, string>) } });
    return fetch(input, init);
  };
  return { fetch: wrapped, requests };
}

/** A tiny provider of our own making, for the failures the sandbox never produces. */
async function fakeProvider(handler: (request: IncomingMessage, response: ServerResponse, index: number) => void) {
  const requests: IncomingMessage[] = [];
  const server = createServer((request, response) => {
    requests.push(request);
    handler(request, response, requests.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    requests,
    connection: { id: 'fake-provider', api_base_url: url, api_token_url: null, api_client_id: null, api_client_secret: null } satisfies ProviderConnection,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const schedule: PayrollScheduleResponse = {
  payroll: {
    id: payroll.id,
    employer_id: payroll.employer_id,
    name: payroll.name,
    payment_run_frequency: payroll.payment_run_frequency,
    currency: 'GBP',
    pay_dates: payroll.pay_dates,
  },
};

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

async function failureOf(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

/** The status a provider failure answers with once it escapes a route. */
const statusOf = (error: ProviderError) => knownProblem(error)!.status;

const fast: HttpAdapterOptions = { backoffBaseMs: 20 };

describe('http adapter against the sandbox provider', () => {
  it('performs the five reference operations with schema-valid answers', async () => {
    const adapter = createHttpAdapter(sandboxConnection());
    const nrn = employee.national_registration_number;

    const light = await adapter.lightAvailability({ availability_check: { national_registration_number: nrn } });
    expect(lightAvailabilityResponseSchema.parse(light)).toEqual(light);
    expect(light.availability_check.availability_status).toBe('confirmed');

    const full = await adapter.fullAvailability({ availability_check: { national_registration_number: nrn, currency: 'GBP' } });
    expect(fullAvailabilityResponseSchema.parse(full)).toEqual(full);
    expect(full.availability_check.employments[0]!.employment.employee_id).toBe(employee.id);

    const mandateId = crypto.randomUUID();
    const enablement = await adapter.enablement({ enablement: { employee_id: employee.id, payroll_id: payroll.id, mandate_id: mandateId } });
    expect(enablementResponseSchema.parse(enablement)).toEqual(enablement);
    expect(enablement.enablement).toMatchObject({ status: 'enabled', mandate_id: mandateId });

    const information = await adapter.payrollInformation(payroll.id);
    expect(payrollScheduleResponseSchema.parse(information)).toEqual(information);
    expect(information.payroll.pay_dates).toEqual(payroll.pay_dates);

    const record: EmployeePushRecord = {
      pay_period: payroll.pay_dates[0]!.pay_period,
      id: 'instruction-1',
      version: 1,
      salary_deduction: { employee_id: employee.id, deduction_amount: 42.1, currency: 'GBP' },
      requested_payments: [],
    };
    const pushed = await adapter.pushEmployeeDeduction(payroll.id, record);
    expect(employeePushResponseSchema.parse(pushed)).toEqual(pushed);
    expect(pushed).toMatchObject({ payroll_id: payroll.id, version: 1, outcome: 'Accepted' });
    expect(sandbox.provider.currentPush(payroll.id, record.pay_period, employee.id)?.record).toEqual(record);
    // The push is idempotent by version: sending it again is harmless.
    expect(await adapter.pushEmployeeDeduction(payroll.id, record)).toEqual(pushed);
  });

  it('caches the access token across calls and fetches a new one once after a 401', async () => {
    const recorder = recordingFetch();
    const adapter = createHttpAdapter(sandboxConnection(), { fetch: recorder.fetch });
    const tokenRequests = () => recorder.requests.filter((r) => r.url === sandbox.tokenUrl);
    for (let i = 0; i < 3; i++) await adapter.payrollInformation(payroll.id);
    await adapter.lightAvailability({ availability_check: { national_registration_number: employee.national_registration_number } });
    expect(tokenRequests()).toHaveLength(1);
    expect(tokenRequests()[0]!.headers.authorization).toMatch(/^Basic /);
    const bearers = new Set(recorder.requests.filter((r) => r.url !== sandbox.tokenUrl).map((r) => r.headers.authorization));
    expect(bearers.size).toBe(1);

    sandbox.revokeAllTokens();
    await adapter.payrollInformation(payroll.id);
    expect(tokenRequests()).toHaveLength(2);
    expect(recorder.requests.filter((r) => r.url.endsWith(`/payrolls/${payroll.id}`))).toHaveLength(5);
  });

  it('shares one token request between concurrent calls and renews a token about to expire', async () => {
    const shortLived = await startSandboxProvider({ directory, clientId: 'service-client', clientSecret: CLIENT_SECRET, tokenTtlSeconds: 1 });
    try {
      const recorder = recordingFetch();
      const adapter = createHttpAdapter(sandboxConnection({ api_base_url: shortLived.url, api_token_url: shortLived.tokenUrl }), { fetch: recorder.fetch });
      await Promise.all([adapter.payrollInformation(payroll.id), adapter.payrollInformation(payroll.id)]);
      expect(recorder.requests.filter((r) => r.url === shortLived.tokenUrl)).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await adapter.payrollInformation(payroll.id);
      expect(recorder.requests.filter((r) => r.url === shortLived.tokenUrl)).toHaveLength(2);
      // Renewed before expiry, not after a 401: no call was refused and repeated.
      expect(recorder.requests.filter((r) => r.url.includes('/payrolls/'))).toHaveLength(3);
    } finally {
      await shortLived.close();
    }
  });

  it('reports a refused client secret as a 502 that does not reveal the secret', async () => {
    const secret = 'a-wrong-secret-value';
    const error = await failureOf(createHttpAdapter(sandboxConnection({ api_client_secret: secret }), fast).payrollInformation(payroll.id));
    expect(statusOf(error)).toBe(502);
    expect(error.code).toBe('provider-authentication-failed');
    expect(error.providerStatus).toBe(401);
    expect(error.detail).toMatch(/Client authentication failed/);
    expect(JSON.stringify(knownProblem(error)!.toBody('/x'))).not.toContain(secret);
  });

  it('keeps the provider 404 a 404 and passes on a refusal as a 502 with its reason', async () => {
    const adapter = createHttpAdapter(sandboxConnection());
    const missing = await failureOf(adapter.payrollInformation(crypto.randomUUID()));
    expect(missing).toBeInstanceOf(ProviderNotFoundError);
    expect(statusOf(missing)).toBe(404);

    const record: EmployeePushRecord = {
      pay_period: payroll.pay_dates[1]!.pay_period,
      id: 'instruction-2',
      version: 3,
      salary_deduction: { employee_id: employee.id, deduction_amount: 10, currency: 'GBP' },
      requested_payments: [],
    };
    await adapter.pushEmployeeDeduction(payroll.id, record);
    const stale = await failureOf(adapter.pushEmployeeDeduction(payroll.id, { ...record, version: 2 }));
    expect(statusOf(stale)).toBe(502);
    expect(stale.code).toBe('provider-rejected');
    expect(stale.providerStatus).toBe(409);
    expect(stale.detail).toMatch(/older than the current version 3/);
  });
});

describe('http adapter resilience', () => {
  it('gives up with 504 once the time budget is spent on a provider that never answers', async () => {
    const hanging = await fakeProvider(() => {});
    try {
      const started = performance.now();
      const error = await failureOf(createHttpAdapter(hanging.connection, { timeoutMs: 300 }).payrollInformation(payroll.id));
      const elapsed = performance.now() - started;
      expect(statusOf(error)).toBe(504);
      expect(error.code).toBe('provider-timeout');
      expect(elapsed).toBeGreaterThanOrEqual(280);
      expect(elapsed).toBeLessThan(1500);
    } finally {
      await hanging.close();
    }
  });

  it('retries a read after 503s and succeeds, with one idempotency key per logical call', async () => {
    const flaky = await fakeProvider((request, response, index) => {
      if (index < 2) return json(response, 503, { title: 'Service Unavailable' });
      if (request.url?.startsWith('/payrolls/')) return json(response, 200, schedule);
      return json(response, 200, { availability_check: { availability_status: 'confirmed', employment_count: 1 } });
    });
    try {
      const adapter = createHttpAdapter(flaky.connection, fast);
      expect(await adapter.payrollInformation(payroll.id)).toEqual(schedule);
      expect(flaky.requests).toHaveLength(3);
      expect(flaky.requests.every((r) => r.method === 'GET' && r.url === `/payrolls/${payroll.id}`)).toBe(true);

      flaky.requests.length = 0;
      await adapter.lightAvailability({ availability_check: { family_name: 'Smith', date_of_birth: '1980-01-01' } });
      expect(flaky.requests).toHaveLength(3);
      const keys = new Set(flaky.requests.map((r) => r.headers['idempotency-key']));
      expect(keys.size).toBe(1);
      expect([...keys][0]).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await flaky.close();
    }
  });

  it('stops after the configured number of retries with a 502', async () => {
    const down = await fakeProvider((_request, response) => json(response, 500, { detail: 'database on fire' }));
    try {
      const error = await failureOf(createHttpAdapter(down.connection, { ...fast, retries: 2 }).payrollInformation(payroll.id));
      expect(down.requests).toHaveLength(3);
      expect(statusOf(error)).toBe(502);
      expect(error.code).toBe('provider-unavailable');
      expect(error.detail).toContain('database on fire');
    } finally {
      await down.close();
    }
  });

  it('honours Retry-After on 429, and gives up at once when it asks for more than the budget', async () => {
    const limited = await fakeProvider((request, response, index) => {
      if (index === 0) return json(response, 429, { title: 'Too Many Requests' }, { 'retry-after': '1' });
      if (request.url === '/slow') return json(response, 429, {}, { 'retry-after': '120' });
      return json(response, 200, schedule);
    });
    try {
      const started = performance.now();
      await createHttpAdapter(limited.connection, fast).payrollInformation(payroll.id);
      expect(performance.now() - started).toBeGreaterThanOrEqual(950);
      expect(limited.requests).toHaveLength(2);
    } finally {
      await limited.close();
    }

    const saturated = await fakeProvider((_request, response) => json(response, 429, {}, { 'retry-after': '120' }));
    try {
      const started = performance.now();
      const error = await failureOf(createHttpAdapter(saturated.connection, fast).payrollInformation(payroll.id));
      expect(performance.now() - started).toBeLessThan(1000);
      expect(saturated.requests).toHaveLength(1);
      expect(statusOf(error)).toBe(502);
      expect(error.providerStatus).toBe(429);
    } finally {
      await saturated.close();
    }
  });

  it('does not repeat an enablement the provider answered, but does repeat one that never arrived', async () => {
    const enablementBody = { enablement: { employee_id: employee.id, payroll_id: payroll.id, mandate_id: crypto.randomUUID() } };
    const failing = await fakeProvider((_request, response) => json(response, 503, { detail: 'try later' }));
    try {
      const error = await failureOf(createHttpAdapter(failing.connection, fast).enablement(enablementBody));
      expect(error.code).toBe('provider-unavailable');
      expect(failing.requests).toHaveLength(1);
    } finally {
      await failing.close();
    }

    const dropping = await fakeProvider((request, response, index) => {
      if (index === 0) return request.socket.destroy();
      return json(response, 200, { enablement: { ...enablementBody.enablement, status: 'enabled', reason: null } });
    });
    try {
      const answer = await createHttpAdapter(dropping.connection, fast).enablement(enablementBody);
      expect(answer.enablement.status).toBe('enabled');
      expect(dropping.requests).toHaveLength(2);
      expect(dropping.requests[0]!.headers['idempotency-key']).toBe(dropping.requests[1]!.headers['idempotency-key']);
    } finally {
      await dropping.close();
    }
  });

  it('reports an unreachable provider as 502 after retrying', async () => {
    const gone = await fakeProvider(() => {});
    await gone.close();
    const recorder = recordingFetch();
    const error = await failureOf(createHttpAdapter(gone.connection, { ...fast, retries: 2, fetch: recorder.fetch }).payrollInformation(payroll.id));
    expect(statusOf(error)).toBe(502);
    expect(error.code).toBe('provider-unavailable');
    expect(error.failure).toBe('unreachable');
    expect(recorder.requests).toHaveLength(3);
  });

  it('refuses answers that are not the reference schema or not JSON with 502, without retrying', async () => {
    const wrong = await fakeProvider((request, response) => {
      if (request.url?.startsWith('/payrolls/')) return json(response, 200, { payroll: { ...schedule.payroll, pay_dates: [{ pay_date: '2026-12-24' }] } });
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>maintenance</html>');
    });
    try {
      const adapter = createHttpAdapter(wrong.connection, fast);
      const badShape = await failureOf(adapter.payrollInformation(payroll.id));
      expect(statusOf(badShape)).toBe(502);
      expect(badShape.code).toBe('provider-bad-response');
      expect(badShape.detail).toContain('/payroll/pay_dates/0/payroll_cutoff_date');
      const notJson = await failureOf(adapter.lightAvailability({ availability_check: { national_registration_number: 'QQ123456C' } }));
      expect(notJson.code).toBe('provider-bad-response');
      expect(wrong.requests).toHaveLength(2);
    } finally {
      await wrong.close();
    }
  });

  it('never shows credentials a provider echoes back', async () => {
    const echoing = await fakeProvider((request, response) => {
      if (request.url === '/token') return json(response, 200, { access_token: 'tok-echoed-123456', token_type: 'bearer', expires_in: 300 });
      return json(response, 400, { detail: `bad request from ${String(request.headers.authorization)} using ${CLIENT_SECRET}` });
    });
    try {
      const adapter = createHttpAdapter({
        ...echoing.connection,
        api_token_url: `${echoing.url}/token`,
        api_client_id: 'service-client',
        api_client_secret: CLIENT_SECRET,
      });
      const error = await failureOf(adapter.payrollInformation(payroll.id));
      expect(error.code).toBe('provider-rejected');
      expect(error.detail).toContain('[redacted]');
      expect(error.detail).not.toContain('tok-echoed-123456');
      expect(error.detail).not.toContain(CLIENT_SECRET);
    } finally {
      await echoing.close();
    }
  });
});

describe('httpAdapterFactory', () => {
  it('gives no adapter to providers without an API and keeps one adapter per provider', () => {
    const factory = httpAdapterFactory();
    expect(factory(sandboxConnection({ api_base_url: null }))).toBeNull();
    const adapter = factory(sandboxConnection());
    expect(adapter).not.toBeNull();
    expect(factory(sandboxConnection())).toBe(adapter);
    expect(factory(sandboxConnection({ api_client_secret: 'rotated-secret' }))).not.toBe(adapter);
  });

  it('reports a token URL without credentials as a misconfigured provider', async () => {
    const adapter = httpAdapterFactory()(sandboxConnection({ api_client_secret: null }))!;
    const error = await failureOf(adapter.payrollInformation(payroll.id));
    expect(statusOf(error)).toBe(502);
    expect(error.code).toBe('provider-misconfigured');
  });
});
