import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import { createClient, type IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import { PROBLEM_TYPE_BASE } from '../../../src/faces/http/problem.ts';
import { markSandboxPayoutPaid } from '../../../src/settlement/payouts/payout-service.ts';
import { NotFoundError } from '../../../src/platform/shared/domain-errors.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createBiller, createOperator, createPayoutRow } from '../../support/factories.ts';
import { authHeaders, injectJson, startTestApp, type TestApp } from '../../support/test-app.ts';

// A sandbox biller's payout is simulated money, not live data: only the simulation settles it. An
// operator marking it paid or failed finds no such payout; the simulation's own entry still pays it,
// and cannot reach a live payout.

let t: TestApp;
let operatorHeaders: Record<string, string>;
let sandboxBiller: IssuedCredentials;

beforeAll(async () => {
  t = await startTestApp();
  operatorHeaders = await authHeaders(t.app, await createOperator(t.db));
  sandboxBiller = await createClient(t.db, { name: 'Sandbox twin', role: 'biller', sandbox: true });
});
afterAll(async () => t?.close());

const post = (url: string, body: object) => injectJson(t.app, { method: 'POST', url, headers: { ...operatorHeaders, 'idempotency-key': randomUUID() }, body });
const payoutRow = (id: string) => t.db.selectFrom('payouts').select(['status', 'version']).where('id', '=', id).executeTakeFirstOrThrow();
const auditOf = (id: string) => t.db.selectFrom('audit_log').select('action').where('resource_id', '=', id).execute();

describe("an operator settling a sandbox biller's payout", () => {
  it.each([
    ['paid', { reason: 'statement line 12' }],
    ['failed', { reason: 'account closed' }],
  ])('POST /payouts/{id}/%s answers 404, and the payout stays pending, unaudited', async (mark, body) => {
    const payout = await createPayoutRow(t.db, { billerClientId: sandboxBiller.clientId });
    const response = await post(`/payouts/${payout.id}/${mark}`, body);
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json().type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
    expect(await payoutRow(payout.id)).toEqual({ status: 'pending', version: 1 });
    expect(await auditOf(payout.id)).toEqual([]);
  });

  it('the CLI mark-paid and mark-failed fail with one line, and the payout stays pending', async () => {
    const payout = await createPayoutRow(t.db, { billerClientId: sandboxBiller.clientId });
    for (const args of [
      ['payouts', 'mark-paid', '--payout', payout.id, '--by', 'ops'],
      ['payouts', 'mark-failed', '--payout', payout.id, '--reason', 'account closed', '--by', 'ops'],
    ]) {
      const result = await runDeductions(args, cliEnvOf(t.config));
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(new RegExp(`Payout ${payout.id}`));
    }
    expect(await payoutRow(payout.id)).toEqual({ status: 'pending', version: 1 });
  });

  it("a live biller's payout is still marked paid by an operator", async () => {
    const payout = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId });
    const response = await post(`/payouts/${payout.id}/paid`, {});
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().payout.status).toBe('paid');
  });
});

describe("the simulation's own settlement", () => {
  it("marks a sandbox biller's payout paid, audited, and finds no live payout", async () => {
    const settlement = { actor: cliActor('sandbox simulation'), reason: 'sandbox simulation' };
    const sandboxPayout = await createPayoutRow(t.db, { billerClientId: sandboxBiller.clientId });
    const paid = await t.db.transaction().execute((trx) => markSandboxPayoutPaid(trx, sandboxPayout.id, settlement));
    expect(paid.status).toBe('paid');
    expect(await auditOf(sandboxPayout.id)).toEqual([{ action: 'payout.marked_paid' }]);

    const livePayout = await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId });
    await expect(t.db.transaction().execute((trx) => markSandboxPayoutPaid(trx, livePayout.id, settlement))).rejects.toBeInstanceOf(NotFoundError);
    expect(await payoutRow(livePayout.id)).toEqual({ status: 'pending', version: 1 });
  });
});
