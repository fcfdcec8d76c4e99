/**
 * Availability timing (a script, not a test):
 * `npx tsx test/bench/availability-timing.ts [--database deductions_bench_availability] [--employees 20000] [--rounds 300]`
 *
 * Does a not_found answer take as long whether the national registration number is unknown or
 * known, alone or with a wrong date of birth or family name? (A request without all three identifiers
 * asks no payroll provider, so it is compared with its own kind: what it skips depends on the
 * request's shape, which the caller knows, not on anyone's data.) Seeds a directory of employees, then
 * sends full checks of each kind through the real app (auth, per-biller limit, lookup log),
 * interleaved in shuffled order each round so that load from anything else on the machine falls on
 * all kinds alike. Prints the median, 90th percentile and mean per kind, and a full match for
 * comparison (it does more: the employments, pay dates and salary it returns).
 */
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createClient } from '../../src/directory/auth/clients-service.ts';
import { TokenIssuer } from '../../src/directory/auth/token-issuer.ts';
import { parseConfig } from '../../src/platform/config/config.ts';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { buildApp } from '../../src/faces/http/app.ts';
import { composition } from '../../bin/composition.ts';
import { noProviderApis } from '../../src/directory/payroll-providers/adapter.ts';
import { connected, createProducerConnection } from '../../src/platform/runtime/redis-connections.ts';
import { queueReconciliationRequester } from '../../src/cycle/reconciliation/reconciliation-requests.ts';
import { createEmployer, createPayroll, createPayrollProvider, futureMonthlyPayDates } from '../support/factories.ts';
import { recreateDatabase } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    database: { type: 'string', default: 'deductions_bench_availability' },
    employees: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '300' },
  },
});
const employeeCount = Number(values.employees);
const rounds = Number(values.rounds);
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${values.database}`;

const config = parseConfig({
  ...process.env,
  DATABASE_URL: databaseUrl,
  QUEUE_PREFIX: `bench-availability-${process.pid}`,
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_SECOND: '1000000',
  RATE_LIMIT_BURST: '1000000',
  AVAILABILITY_CHECKS_PER_MINUTE: '60000000',
  AVAILABILITY_CHECKS_BURST: '1000000',
  AVAILABILITY_LOG_KEY: 'bench-availability-log-key-0123456789abcdef',
});

await recreateDatabase(databaseUrl);
const db = createDatabase(databaseUrl, 5);
await migrateToLatest(db);
const provider = await createPayrollProvider(db);
const employer = await createEmployer(db, provider.id);
const payroll = await createPayroll(db, { providerId: provider.id, employerId: employer.id, frequency: 'monthly', payDates: futureMonthlyPayDates(6) });
await sql`
  with e as (
    insert into employees (payroll_provider_id, national_registration_number, date_of_birth, given_name, family_name)
    select ${provider.id}::uuid, 'QQ' || lpad(g::text, 6, '0') || 'C', date '1960-01-01' + (g % 15000), 'Given', 'Family' || g
    from generate_series(1, ${employeeCount}) g
    returning id, national_registration_number
  )
  insert into employments (employee_id, employer_id, payroll_id, payroll_reference, employment_status, contract_type, annualised_salary)
  select id, ${employer.id}::uuid, ${payroll.id}::uuid, national_registration_number, 'active', 'full_time', 3000000 from e
`.execute(db);
await sql`analyze`.execute(db);
const target = await db
  .selectFrom('employees')
  .select(['national_registration_number', 'date_of_birth', 'family_name'])
  .where('national_registration_number', '=', `QQ${String(Math.floor(employeeCount / 2)).padStart(6, '0')}C`)
  .executeTakeFirstOrThrow();
const person = { national_registration_number: target.national_registration_number!, date_of_birth: target.date_of_birth!, family_name: target.family_name };

const redis = await connected(createProducerConnection(config.REDIS_URL));
const tokens = await TokenIssuer.generate({ issuer: config.AUTH_ISSUER, audience: config.AUTH_AUDIENCE, ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS });
const reconciliation = queueReconciliationRequester(config.REDIS_URL, config.QUEUE_PREFIX);
const app = await buildApp({ config, db, redis, tokens, adapterFor: noProviderApis, reconciliation }, composition.routes);
await app.ready();
const biller = await createClient(db, { name: 'Bench biller', role: 'biller' });
const tokenResponse = await app.inject({
  method: 'POST',
  url: '/oauth2/token',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: biller.clientId, client_secret: biller.clientSecret }).toString(),
});
const headers = { authorization: `Bearer ${tokenResponse.json().access_token}`, 'x-api-key': biller.apiKey, 'content-type': 'application/json' };

const kinds: Record<string, Record<string, string>> = {
  'unknown number': { ...person, national_registration_number: 'ZZ999999Z' },
  'known number alone': { national_registration_number: person.national_registration_number },
  'unknown number alone': { national_registration_number: 'ZZ999999Z' },
  'wrong date of birth': { ...person, date_of_birth: '1901-01-01' },
  'wrong family name': { ...person, family_name: 'Nobody' },
  'full match (confirmed)': person,
};
const samples = new Map<string, number[]>(Object.keys(kinds).map((k) => [k, []]));

async function send(kind: string): Promise<number> {
  const started = performance.now();
  const response = await app.inject({ method: 'POST', url: '/deductions/availability/full', headers, payload: JSON.stringify({ availability_check: kinds[kind] }) });
  const ms = performance.now() - started;
  const status = response.json().availability_check?.availability_status;
  const expected = kind.startsWith('full match') ? 'confirmed' : 'not_found';
  if (response.statusCode !== 200 || status !== expected) throw new Error(`${kind}: ${response.statusCode} ${response.body}`);
  return ms;
}

for (const kind of Object.keys(kinds)) for (let i = 0; i < 20; i++) await send(kind); // warm-up
for (let round = 0; round < rounds; round++) {
  const order = Object.keys(kinds).sort(() => Math.random() - 0.5);
  for (const kind of order) samples.get(kind)!.push(await send(kind));
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
process.stdout.write(`Full availability checks, ${employeeCount.toLocaleString('en-GB')} employees, ${rounds} rounds (ms)\n`);
process.stdout.write(`  ${'kind'.padEnd(24)} ${'median'.padStart(8)} ${'p90'.padStart(8)} ${'mean'.padStart(8)}\n`);
for (const [kind, values] of samples) {
  const sorted = [...values].sort((a, b) => a - b);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  process.stdout.write(
    `  ${kind.padEnd(24)} ${quantile(sorted, 0.5).toFixed(2).padStart(8)} ${quantile(sorted, 0.9).toFixed(2).padStart(8)} ${mean.toFixed(2).padStart(8)}\n`,
  );
}

await app.close();
await reconciliation.close();
const keys = await redis.keys(`${config.QUEUE_PREFIX}:*`);
if (keys.length > 0) await redis.del(...keys);
redis.disconnect();
await db.destroy();
