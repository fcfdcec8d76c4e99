import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { TOKEN_BODY_LIMIT_BYTES } from '../../../src/faces/http/routes/token-routes.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { bodyLimitOf, NO_BODY_LIMIT_BYTES, PLAIN_BODY_LIMIT_BYTES } from '../../../src/faces/http/route.ts';
import { CONFIRMATION_BODY_LIMIT_BYTES } from '../../../src/faces/http/routes/confirmation-routes.ts';
import { EMPLOYEE_IMPORT_BODY_LIMIT_BYTES } from '../../../src/faces/http/routes/admin-employee-routes.ts';
import { MAX_RETURN_FILE_BYTES } from '../../../src/cycle/deduction-returns/return-file.ts';
import { createBiller, createEmploymentWorld, createMandateRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

const DECLARED_BYTES = 30 * 1024 * 1024;
const MiB = 1024 * 1024;

let t: TestApp;
let port: number;
let biller: IssuedCredentials;
let headers: Record<string, string>;
let mandateId: string;
/** The server's side of each connection, to count what it read. */
const serverSockets: Socket[] = [];

beforeAll(async () => {
  t = await startTestApp();
  t.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
  const world = await createEmploymentWorld(t.db);
  biller = await createBiller(t.db);
  headers = await authHeaders(t.app, biller);
  mandateId = (await createMandateRow(t.db, { billerClientId: biller.clientId, employeeId: world.employee.id, payrollId: world.payroll.id })).id;
});
afterAll(async () => t?.close());

interface UploadOutcome {
  status: number;
  head: string;
  body: string;
  /** Body bytes the client managed to hand to its socket. */
  bodyBytesWritten: number;
  /** Everything the server read from the connection, headers included. */
  serverBytesRead: number;
}

/**
 * Sends a 30 MB JSON body over a real connection: with a Content-Length, or chunked (no length
 * declared, so the server cannot refuse it up front). `sliver`: 64 KiB, then waits for the answer
 * (a server that reads the body before authenticating never answers). `flat-out`: writes as fast as
 * the connection takes it until the server answers or closes.
 */
async function upload(path: string, extraHeaders: string, mode: 'sliver' | 'flat-out', framing: 'content-length' | 'chunked' = 'content-length'): Promise<UploadOutcome> {
  const connectionsBefore = serverSockets.length;
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let response = '';
  socket.on('data', (data) => (response += data.toString('latin1')));
  // Writing after the server closed fails with EPIPE or ECONNRESET: that is the point, not a failure.
  socket.on('error', () => {});
  let isClosed = false;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  void closed.then(() => (isClosed = true));
  const length = framing === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${DECLARED_BYTES}`;
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nIdempotency-Key: ${crypto.randomUUID()}\r\n${extraHeaders}${length}\r\n\r\n`);
  const data = Buffer.alloc(64 * 1024, 0x20);
  const chunk = framing === 'chunked' ? Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]) : data;
  let bodyBytesWritten = 0;
  do {
    const flushed = socket.write(chunk);
    bodyBytesWritten += data.length;
    if (!flushed) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
  } while (mode === 'flat-out' && response === '' && !isClosed && bodyBytesWritten < DECLARED_BYTES);
  await closed;
  const serverSocket = serverSockets[connectionsBefore]!;
  const [head = '', body = ''] = response.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), head: head.toLowerCase(), body, bodyBytesWritten, serverBytesRead: serverSocket.bytesRead };
}

/** The largest body of the API (32 MB): a 30 MB upload fits, so only authentication can stop it early. */
const confirmationPath = () => `/deductions/${crypto.randomUUID()}/confirmation`;

describe('authentication before the body is read', () => {
  const refused: Array<[string, () => string]> = [
    ['no credentials', () => ''],
    ['a forged bearer token and an unknown API key', () => 'Authorization: Bearer eyJhbGciOiJFUzI1NiJ9.e30.c2ln\r\nX-Api-Key: ak_unknown\r\n'],
    ['a valid API key without the bearer token the route needs', () => `X-Api-Key: ${biller.apiKey}\r\n`],
  ];

  for (const [label, credentials] of refused) {
    it(`answers ${label} with 401 and closes the connection having read a sliver of a 30 MB body`, async () => {
      const outcome = await upload(confirmationPath(), credentials(), 'sliver');
      expect(outcome.status).toBe(401);
      expect(outcome.head).toContain('\r\nconnection: close');
      expect(JSON.parse(outcome.body)).toMatchObject({ type: `${PROBLEM_TYPE_BASE}unauthorized`, status: 401 });
      // 64 KiB sent of 30 MB declared: the server answered and hung up without waiting for the rest.
      expect(outcome.bodyBytesWritten).toBe(64 * 1024);
      expect(outcome.serverBytesRead).toBeLessThan(128 * 1024);
    });
  }

  it('stops a client streaming 30 MB flat out long before the end, having read almost none of it', async () => {
    const outcome = await upload(confirmationPath(), '', 'flat-out');
    expect(outcome.status).toBe(401);
    expect(outcome.head).toContain('\r\nconnection: close');
    expect(outcome.bodyBytesWritten).toBeLessThan(DECLARED_BYTES);
    // What the client wrote piled up in socket buffers; the server read a few chunks of it.
    expect(outcome.serverBytesRead).toBeLessThan(2 * MiB);
  });

  it('stops a chunked upload of undeclared length the same way', async () => {
    const outcome = await upload('/payments', '', 'flat-out', 'chunked');
    expect(outcome.status).toBe(401);
    expect(outcome.head).toContain('\r\nconnection: close');
    expect(outcome.serverBytesRead).toBeLessThan(2 * MiB);
  });

  it('answers a 30 MB upload to a URL no route has with 404, without reading it', async () => {
    const outcome = await upload('/no-such-route', '', 'sliver');
    expect(outcome.status).toBe(404);
    expect(outcome.head).toContain('\r\nconnection: close');
    expect(JSON.parse(outcome.body)).toMatchObject({ type: `${PROBLEM_TYPE_BASE}not-found`, status: 404 });
    expect(outcome.serverBytesRead).toBeLessThan(128 * 1024);
  });

  it('refuses an authenticated caller’s declared 30 MB with 413 (over the route’s limit) without reading it', async () => {
    const outcome = await upload('/payments', `Authorization: ${headers.authorization}\r\nX-Api-Key: ${biller.apiKey}\r\n`, 'flat-out');
    expect(outcome.status).toBe(413);
    expect(outcome.head).toContain('\r\nconnection: close');
    expect(JSON.parse(outcome.body)).toMatchObject({ type: `${PROBLEM_TYPE_BASE}body-too-large`, status: 413 });
    expect(outcome.serverBytesRead).toBeLessThan(2 * MiB);
  });
});

describe('body limits per route', () => {
  const limitOf = (operationId: string) => {
    const spec = t.app.routeSpecs.find((route) => route.operationId === operationId);
    if (!spec) throw new Error(`no route ${operationId}`);
    return bodyLimitOf(spec, t.config.BODY_LIMIT_BYTES);
  };

  it('gives metadata routes BODY_LIMIT_BYTES, the confirmation batch its own, and every other route little', () => {
    for (const operationId of ['create_new_payment_request', 'create_mandate', 'instruct_new_schedule']) {
      expect(limitOf(operationId), operationId).toBe(t.config.BODY_LIMIT_BYTES);
    }
    expect(limitOf('submit_deduction_confirmation')).toBe(CONFIRMATION_BODY_LIMIT_BYTES);
    expect(limitOf('issue_token')).toBe(TOKEN_BODY_LIMIT_BYTES);
    for (const operationId of ['full_availability_check', 'push_employee_deduction', 'put_payroll_employee', 'create_webhook_endpoint']) {
      expect(limitOf(operationId), operationId).toBe(PLAIN_BODY_LIMIT_BYTES);
    }
    for (const operationId of ['cancel_payment_request', 'cancel_schedule']) {
      expect(limitOf(operationId), operationId).toBe(NO_BODY_LIMIT_BYTES);
    }
    // An import file is streamed to its parser, never held whole: its limit bounds the upload.
    expect(limitOf('admin_import_employees')).toBe(EMPLOYEE_IMPORT_BODY_LIMIT_BYTES);
    // So is a bank statement, bounded by STATEMENT_LIMIT_BYTES.
    expect(limitOf('import_bank_statement')).toBe(t.config.STATEMENT_LIMIT_BYTES);
    // So is a deduction return file (read after authentication, bounded by its own limit).
    expect(limitOf('import_deduction_return_file')).toBe(MAX_RETURN_FILE_BYTES);
    // Nothing but the batch and the streamed files exceeds the configured limit.
    const streamed = new Set(['submit_deduction_confirmation', 'admin_import_employees', 'import_bank_statement', 'import_deduction_return_file']);
    for (const spec of t.app.routeSpecs) {
      if (streamed.has(spec.operationId)) continue;
      expect(bodyLimitOf(spec, t.config.BODY_LIMIT_BYTES), spec.operationId).toBeLessThanOrEqual(t.config.BODY_LIMIT_BYTES);
    }
  });

  it('accepts a payment with metadata near its documented limit (3 items of about 1 MB)', async () => {
    const item = 'm'.repeat(1024 * 1024 - 16);
    const response = await injectJson(t.app, {
      method: 'POST',
      url: '/payments',
      headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
      body: { payment_record: { mandate_id: mandateId, amount: 1200, metadata: { a: item, b: item, c: item } } },
    });
    expect(response.statusCode, response.body.slice(0, 300)).toBe(201);
  });

  it('refuses with 413 a body larger than a route without metadata needs', async () => {
    const availability = await injectJson(t.app, {
      method: 'POST',
      url: '/deductions/availability/full',
      headers,
      body: { pad: 'p'.repeat(PLAIN_BODY_LIMIT_BYTES) },
    });
    expect(availability.statusCode).toBe(413);
    expect(availability.json().type).toBe(`${PROBLEM_TYPE_BASE}body-too-large`);

    const cancel = await injectJson(t.app, {
      method: 'POST',
      url: `/payments/${crypto.randomUUID()}/cancel`,
      headers: { ...headers, 'idempotency-key': crypto.randomUUID() },
      body: { pad: 'p'.repeat(NO_BODY_LIMIT_BYTES) },
    });
    expect(cancel.statusCode).toBe(413);

    const token = await t.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=client_credentials&client_id=${biller.clientId}&client_secret=${'s'.repeat(TOKEN_BODY_LIMIT_BYTES)}`,
    });
    expect(token.statusCode).toBe(413);
  });
});
