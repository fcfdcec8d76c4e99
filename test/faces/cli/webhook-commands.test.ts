import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { endpointsJson, formatEndpointList, type ListedEndpoint } from '../../../src/faces/cli/webhook-commands.ts';
import { buildProgram } from '../../../src/faces/cli/main.ts';
import { attemptDelivery, webhookDeliverySettings } from '../../../src/faces/webhooks/webhook-delivery-service.ts';
import { dispatchPendingEvents } from '../../../src/faces/webhooks/webhook-dispatch-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { deliveriesOfEndpoint, newBiller, recordEvent, registerEndpoint } from '../webhooks/webhook-test-kit.ts';

// `deductions webhooks list`: the console's webhooks page at the command line (failing or disabled
// endpoints, worst first), `--all` with those delivering, `--json` for scripts. Run in this process
// through the program the bin runs, against the test app's database.

let t: TestApp;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await t?.close();
});

async function endpointAnswering(status: number, attempt: boolean) {
  const biller = await newBiller(t);
  const receiver = await startWebhookReceiver({ respond: () => ({ status, body: '' }) });
  receivers.push(receiver);
  const endpoint = await registerEndpoint(t, biller.headers, receiver);
  await recordEvent(t.db, biller.clientId, 'payout.created');
  await dispatchPendingEvents(t.db, async () => {});
  if (attempt) {
    const [delivery] = await deliveriesOfEndpoint(t.db, endpoint.id);
    await attemptDelivery(t.db, delivery!.id, { number: 1, of: 5 }, webhookDeliverySettings(t.config));
  }
  const { name } = await t.db.selectFrom('clients').select('name').where('id', '=', biller.clientId).executeTakeFirstOrThrow();
  return { billerName: name, endpointId: endpoint.id, url: `${receiver.url}/hooks` };
}

/** `deductions <args>` in this process, its standard output captured; the database is the test app's. */
async function deductions(args: string[]): Promise<{ stdout: string; exitCode: number | undefined }> {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, QUEUE_PREFIX: process.env.QUEUE_PREFIX };
  Object.assign(process.env, { DATABASE_URL: t.config.DATABASE_URL, QUEUE_PREFIX: t.config.QUEUE_PREFIX });
  const written: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    written.push(String(chunk));
    return true;
  });
  const exitCodeBefore = process.exitCode;
  try {
    const program = await buildProgram(async () => {
      throw new Error('webhooks list needs no composition');
    }, args);
    await program.parseAsync(['node', 'deductions', ...args]);
    return { stdout: written.join(''), exitCode: process.exitCode === exitCodeBefore ? undefined : Number(process.exitCode) };
  } finally {
    write.mockRestore();
    process.exitCode = exitCodeBefore;
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('deductions webhooks list', () => {
  it('lists the failing endpoints with biller, address, since when and deliveries waiting; --all adds those delivering; --json for scripts', async () => {
    const failing = await endpointAnswering(500, true);
    const delivering = await endpointAnswering(200, false);
    const failingSince = (await t.db.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', failing.endpointId).executeTakeFirstOrThrow()).failing_since!;

    const listed = await deductions(['webhooks', 'list']);
    expect(listed.exitCode).toBeUndefined();
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toBe('Webhook endpoints failing or disabled, disabled first, then the longest failing:');
    const at = lines.indexOf(`  ${failing.billerName}  ${failing.url}`);
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toBe(`    failing since ${failingSince.toISOString()}; 1 delivery waiting; endpoint ${failing.endpointId}`);
    expect(listed.stdout).not.toContain(delivering.url);

    // `deductions webhooks` alone is the same list, no longer only its help.
    expect((await deductions(['webhooks'])).stdout).toBe(listed.stdout);

    const all = await deductions(['webhooks', 'list', '--all']);
    expect(all.stdout).toContain(`  ${delivering.billerName}  ${delivering.url}\n    delivering; 1 delivery waiting; endpoint ${delivering.endpointId}`);
    // Worst first: the failing one before the one delivering.
    expect(all.stdout.indexOf(failing.url)).toBeLessThan(all.stdout.indexOf(delivering.url));

    const json = JSON.parse((await deductions(['webhooks', 'list', '--json'])).stdout) as ReturnType<typeof endpointsJson>;
    expect(json.endpoints.find((endpoint) => endpoint.id === failing.endpointId)).toEqual({
      id: failing.endpointId,
      biller_client_id: expect.any(String),
      biller_name: failing.billerName,
      url: failing.url,
      state: 'failing',
      disabled_reason: null,
      failing_since: failingSince.toISOString(),
      pending_deliveries: 1,
    });
  });
});

describe('formatEndpointList', () => {
  const endpoint: ListedEndpoint = {
    id: '019a7b2c-0000-7000-8000-00000000000e',
    url: 'https://hooks.example.com/deductions',
    status: 'disabled',
    disabled_reason: 'failing for 3 days',
    failing_since: new Date('2026-11-27T09:00:00.000Z'),
    biller_client_id: '019a7b2c-0000-7000-8000-00000000000b',
    biller_name: 'Acme Lending',
    pending_deliveries: '12',
  };

  it('says a disabled endpoint is disabled and why, and when the list is cut at the limit', () => {
    expect(formatEndpointList([endpoint], { all: false, limit: 1 }).split('\n')).toEqual([
      'Webhook endpoints failing or disabled, disabled first, then the longest failing (the first 1; --limit shows more):',
      '  Acme Lending  https://hooks.example.com/deductions',
      '    disabled: failing for 3 days; 12 deliveries waiting; endpoint 019a7b2c-0000-7000-8000-00000000000e',
    ]);
  });

  it('says when there is nothing to list', () => {
    expect(formatEndpointList([], { all: false, limit: 100 })).toBe('No webhook endpoint is failing or disabled: every one is delivering.');
    expect(formatEndpointList([], { all: true, limit: 100 })).toBe('No webhook endpoint is registered.');
  });
});
