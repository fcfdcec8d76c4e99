import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPayrollProviderConnection, listPayrollsWithProviderApi } from '../../../src/directory/calendars/calendar-repository.ts';
import { syncPayrollCalendars } from '../../../src/directory/calendars/calendar-sync-service.ts';
import { findProviderOfPayroll } from '../../../src/cycle/instructions/provider-push-repository.ts';
import type { AdapterFactory } from '../../../src/directory/payroll-providers/adapter.ts';
import { listProviderConnections } from '../../../src/directory/payrolls/directory-repository.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createEmployer, createPayroll } from '../../support/factories.ts';

// A sandbox provider is simulated: nothing may call it, even if its row somehow holds an API base
// URL (the API refuses to give it one; this row is written straight into the table).

let database: TestDatabase;
let livePayrollId: string;
let sandboxPayrollId: string;

async function providerWithApi(name: string, sandbox: boolean) {
  return database.db
    .insertInto('payroll_providers')
    .values({
      name,
      sandbox,
      api_base_url: `https://${sandbox ? 'sandbox' : 'live'}.payroll.example/api`,
      api_token_url: `https://${sandbox ? 'sandbox' : 'live'}.payroll.example/oauth2/token`,
      api_client_id: 'salary-deductions',
      api_client_secret: 'not-used-here',
      lead_time_working_days: 2,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

beforeAll(async () => {
  database = await createTestDatabase();
  for (const sandbox of [false, true]) {
    const provider = await providerWithApi(sandbox ? 'Sandbox With URL' : 'Live With API', sandbox);
    const employer = await createEmployer(database.db, provider.id);
    const payroll = await createPayroll(database.db, { providerId: provider.id, employerId: employer.id });
    if (sandbox) sandboxPayrollId = payroll.id;
    else livePayrollId = payroll.id;
  }
});
afterAll(async () => database?.drop());

describe('a sandbox provider with an api_base_url set in its row', () => {
  it('is not listed for the nightly calendar sync, and the sync asks only the live provider', async () => {
    expect((await listPayrollsWithProviderApi(database.db)).map((row) => row.payroll_id)).toEqual([livePayrollId]);

    const asked: string[] = [];
    const adapterFor: AdapterFactory = (provider) => {
      asked.push(provider.api_base_url!);
      return null;
    };
    await syncPayrollCalendars(database.db, adapterFor, '2026-11-28');
    expect(asked).toEqual(['https://live.payroll.example/api']);
  });

  it("is not the connection an operator's calendar sync, an instruction push or an availability check would call", async () => {
    expect(await findPayrollProviderConnection(database.db, sandboxPayrollId)).toBeUndefined();
    expect(await findPayrollProviderConnection(database.db, livePayrollId)).toMatchObject({ api_base_url: 'https://live.payroll.example/api' });
    expect(await findProviderOfPayroll(database.db, sandboxPayrollId)).toBeUndefined();
    expect(await findProviderOfPayroll(database.db, livePayrollId)).toMatchObject({ sandbox: false });
    const urls = async (mode?: { sandbox: boolean }) => (await listProviderConnections(database.db, mode)).map((provider) => provider.api_base_url);
    expect(await urls()).toEqual(['https://live.payroll.example/api']);
    expect(await urls({ sandbox: false })).toEqual(['https://live.payroll.example/api']);
    expect(await urls({ sandbox: true })).toEqual([]);
  });
});
