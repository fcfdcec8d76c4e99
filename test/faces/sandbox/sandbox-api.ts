import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { cliActor } from '../../../src/platform/audit/audit-service.ts';
import type { Database } from '../../../src/platform/db/connection.ts';
import { createSandbox, type SandboxDescription } from '../../../src/faces/sandbox/sandbox-setup-service.ts';
import { secretBoxFor } from '../../../src/platform/shared/secret-box.ts';
import type { Config } from '../../../src/platform/config/config.ts';
import { authHeaders, injectJson } from '../../support/test-app.ts';

// What the sandbox tests share: making a sandbox as `sandbox create` does, and calling the API as its
// biller would.

export const TODAY = new Date().toISOString().slice(0, 10);

export async function makeSandbox(db: Database, config: Config, liveBillerClientId: string, options: { seed?: string; employers?: number; employees?: number } = {}) {
  return createSandbox(db, secretBoxFor(config), {
    liveBillerClientId,
    employers: options.employers ?? 3,
    employeesPerPayroll: options.employees ?? 6,
    seed: options.seed ?? liveBillerClientId,
    today: TODAY,
    leadTimeWorkingDays: 2,
    actor: cliActor('sandbox-test'),
  });
}

/** The sandbox biller's credentials, printed once by `sandbox create`. */
export function sandboxCredentials(sandbox: SandboxDescription) {
  const { client_id: clientId, client_secret: clientSecret, api_key: apiKey } = sandbox.biller;
  if (!clientSecret || !apiKey) throw new Error('this sandbox was described again, without its credentials');
  return { clientId, clientSecret, apiKey };
}

export type Call = (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<{ statusCode: number; body: string; json: () => any }>;

/** Calls as one client: bearer token and API key, an Idempotency-Key on every POST. */
export async function callerOf(app: FastifyInstance, credentials: { clientId: string; clientSecret: string; apiKey: string }): Promise<Call> {
  const headers = await authHeaders(app, credentials);
  return (method, url, body) => {
    const options: Parameters<typeof injectJson>[1] = { method, url, headers: method === 'POST' ? { ...headers, 'idempotency-key': randomUUID() } : headers };
    if (body !== undefined) options.body = body as object;
    return injectJson(app, options);
  };
}

export function mandateBody(person: { employee_id: string; payroll_id: string; given_name: string; family_name: string; date_of_birth: string | null }, reference: string) {
  return {
    mandate_record: {
      employee_id: person.employee_id,
      payroll_id: person.payroll_id,
      consumer: { given_name: person.given_name, family_name: person.family_name, date_of_birth: person.date_of_birth },
      currency: 'GBP',
      authorisation_source: { type: 'online', reference, authorised_at: new Date(Date.now() - 60_000).toISOString() },
      reference,
    },
  };
}
