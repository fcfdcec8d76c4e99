import type { Database } from '../../src/db/connection.ts';
import { createClient, type IssuedCredentials } from '../../src/auth/clients-service.ts';
import type { Scope } from '../../src/auth/scopes.ts';

let counter = 0;
const next = () => ++counter;

export async function createPayrollProvider(db: Database, overrides: { name?: string; leadTimeWorkingDays?: number } = {}) {
  return db
    .insertInto('payroll_providers')
    .values({
      name: overrides.name ?? `Provider ${next()}`,
      api_base_url: null,
      api_token_url: null,
      api_client_id: null,
      api_client_secret: null,
      lead_time_working_days: overrides.leadTimeWorkingDays ?? 2,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function createBiller(db: Database, scopes?: Scope[]): Promise<IssuedCredentials> {
  return createClient(db, { name: `Biller ${next()}`, role: 'biller', ...(scopes ? { scopes } : {}) });
}

export async function createOperator(db: Database): Promise<IssuedCredentials> {
  return createClient(db, { name: `Operator ${next()}`, role: 'operator' });
}

export async function createProviderClient(db: Database, payrollProviderId?: string): Promise<IssuedCredentials> {
  const providerId = payrollProviderId ?? (await createPayrollProvider(db)).id;
  return createClient(db, { name: `Provider client ${next()}`, role: 'payroll_provider', payrollProviderId: providerId });
}
