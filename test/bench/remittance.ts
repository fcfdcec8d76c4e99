/**
 * Remittance benchmark (a script, not a test):
 * `npx tsx test/bench/remittance.ts [--remittances 10000] [--database deductions_bench_remittance]`
 *
 * On a fresh database: `remittances` payroll pay dates each expecting a remittance (one payroll each,
 * ten payrolls per employer), and one camt.053 statement from the simulated bank paying them: 95 % in
 * one credit with the exact reference and amount, 5 % needing the other rules (the reference mangled
 * by the bank, one remittance paid in two credits, two payrolls of one employer paid in one credit,
 * an amount a few pence off). It times the import end to end (parse, store, match) through the
 * import service, and the parse alone; then, in the same run, a floor: the rows the import ends up
 * writing (credits, matches, remittances received), written with INSERT ... SELECT generate_series
 * and UPDATE (rolled back). It checks every remittance ended received (or within the tolerance).
 */
import { createReadStream, statSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { cliActor } from '../../src/platform/audit/audit-service.ts';
import { createDatabase } from '../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../src/platform/db/migrator.ts';
import { readStatement, importStatement } from '../../src/settlement/cash/statement-import-service.ts';
import { remittancePaymentReference } from '../../src/cycle/instructions/payment-reference.ts';
import { simulatedCamt053, type SimulatedEntry } from '../../src/faces/sandbox/simulated-bank-statement.ts';
import { perSecond, recreateDatabase, seconds, timed, timedPartsRolledBack } from './bench-support.ts';

const { values } = parseArgs({
  options: {
    remittances: { type: 'string', default: '10000' },
    database: { type: 'string', default: 'deductions_bench_remittance' },
    file: { type: 'string', default: '/tmp/bench-remittance-camt053.xml' },
  },
});
const COUNT = Number(values.remittances);
const databaseUrl = `postgres://postgres@127.0.0.1:5432/${values.database}`;
const PAY_DATE = '2026-10-30';
const reference = (n: number) => remittancePaymentReference(PAY_DATE, n);
const expected = (n: number) => 10_000 + ((n * 7_919) % 90_000);
const TOLERANCE = 100;

/** Which rule remittance n needs: the last 5 %, in four kinds, pairs for many_to_one kept inside one employer. */
function kindOf(n: number): 'exact' | 'normalised' | 'one_to_many' | 'many_to_one' | 'tolerance' {
  if (n < COUNT * 0.95) return 'exact';
  return (['normalised', 'one_to_many', 'many_to_one', 'tolerance'] as const)[n % 4]!;
}

function statementEntries(): SimulatedEntry[] {
  const entries: SimulatedEntry[] = [];
  const credit = (amount: number, text: string) =>
    entries.push({
      bankReference: `BNK${String(entries.length + 1).padStart(8, '0')}`,
      direction: 'credit',
      amount,
      bookingDate: '2026-11-02',
      reference: text,
      debtorName: 'Employer Ltd',
    });
  for (let n = 1; n <= COUNT; n++) {
    switch (kindOf(n)) {
      case 'exact':
        credit(expected(n), reference(n));
        break;
      case 'normalised':
        credit(expected(n), `sdr 261030 ${reference(n).slice(9).toLowerCase()} salary deductions`);
        break;
      case 'one_to_many':
        credit(Math.floor(expected(n) / 2), reference(n));
        credit(expected(n) - Math.floor(expected(n) / 2), reference(n));
        break;
      case 'many_to_one':
        // n % 4 === 3 here; n+1 (% 4 === 0, a tolerance one otherwise) is paid with it when in the same employer.
        if (Math.floor((n - 1) / 10) === Math.floor(n / 10) && n < COUNT) {
          credit(expected(n) + expected(n + 1), `${reference(n)} ${reference(n + 1)}`);
          n += 1;
        } else credit(expected(n), reference(n));
        break;
      case 'tolerance':
        credit(expected(n) - 37, reference(n));
        break;
    }
  }
  return entries;
}

async function main() {
  await recreateDatabase(databaseUrl);
  const db = createDatabase(databaseUrl, 4);
  try {
    await migrateToLatest(db);
    process.stdout.write(`Remittance benchmark: ${COUNT.toLocaleString('en-GB')} payroll pay dates expecting a remittance, one camt.053 statement\n`);
    const account = { sortCode: '04-00-04', accountNumber: '41234978' };
    await sql`insert into collection_accounts (currency, account_number, sort_code, account_holder_name) values ('GBP', ${account.accountNumber}, ${account.sortCode}, 'Collections Ltd')`.execute(
      db,
    );
    await sql`insert into payroll_providers (id, name) values ('00000000-0000-4000-8000-000000000001', 'Bench provider')`.execute(db);
    await sql`
      insert into employers (id, payroll_provider_id, external_id, name)
      select ('00000000-0000-4000-8001-' || lpad(e::text, 12, '0'))::uuid, '00000000-0000-4000-8000-000000000001', 'E' || e, 'Employer ' || e
      from generate_series(0, ${Math.ceil(COUNT / 10)}) e
    `.execute(db);
    await sql`
      insert into payrolls (id, employer_id, payroll_provider_id, external_id, name)
      select ('00000000-0000-4000-8002-' || lpad(n::text, 12, '0'))::uuid, ('00000000-0000-4000-8001-' || lpad((n / 10)::text, 12, '0'))::uuid,
             '00000000-0000-4000-8000-000000000001', 'P' || n, 'Payroll ' || n
      from generate_series(1, ${COUNT}) n
    `.execute(db);
    await sql`
      insert into remittances (id, payroll_id, pay_date, employer_id, currency, payment_reference, requested, deducted, expected, status, due_date)
      select gen_random_uuid(), ('00000000-0000-4000-8002-' || lpad(n::text, 12, '0'))::uuid, ${PAY_DATE}::date,
             ('00000000-0000-4000-8001-' || lpad((n / 10)::text, 12, '0'))::uuid, 'GBP', 'SDR261030P' || lpad(n::text, 8, '0'),
             10000 + ((n * 7919) % 90000), 10000 + ((n * 7919) % 90000), 10000 + ((n * 7919) % 90000), 'expected', '2026-11-04'
      from generate_series(1, ${COUNT}) n
    `.execute(db);

    const entries = statementEntries();
    writeFileSync(values.file!, simulatedCamt053({ statementId: 'BENCH-STMT-1', account, currency: 'GBP', createdAt: new Date('2026-11-02T18:00:00Z'), entries }));
    process.stdout.write(`  statement: ${entries.length.toLocaleString('en-GB')} credits, ${(statSync(values.file!).size / 1_048_576).toFixed(1)} MB\n`);
    const policy = { today: '2026-11-02', lateWorkingDays: 3, toleranceMinor: TOLERANCE, holidays: new Set<string>() };

    const parse = await timed('parse only (streamed)', () => readStatement(createReadStream(values.file!), { maxBytes: 1 << 30, fileName: null }));
    const imported = await timed('import, store and match', () =>
      importStatement(db, { source: createReadStream(values.file!), fileName: 'bench.xml', actor: cliActor('bench'), maxBytes: 1 << 30, policy }),
    );
    const matching = imported.result.matching!;
    process.stdout.write(
      `  matches by rule: ${Object.entries(matching.byRule)
        .map(([rule, n]) => `${rule} ${n}`)
        .join(', ')}; credits left unmatched: ${matching.unmatchedCredits}\n`,
    );

    const check = await sql<{ received: number; flagged_off: number; others: number }>`
      select count(*) filter (where received = expected)::int as received,
             count(*) filter (where received <> expected and abs(received - expected) <= ${TOLERANCE})::int as flagged_off,
             count(*) filter (where abs(received - expected) > ${TOLERANCE})::int as others
      from remittances
    `.execute(db);
    const figures = check.rows[0]!;
    process.stdout.write(`  remittances: ${figures.received} received exactly, ${figures.flagged_off} within the tolerance, ${figures.others} not matched\n`);
    if (figures.others > 0) process.exitCode = 1;

    const matches = Object.values(matching.byRule).reduce((a, b) => a + b, 0);
    const floor = await timedPartsRolledBack(db, async (part) => {
      await part(
        'credits',
        sql`insert into bank_credits (id, bank_statement_id, collection_account_id, bank_reference, amount, currency, booking_date, remittance_information)
        select gen_random_uuid(), (select id from bank_statements limit 1), (select id from collection_accounts limit 1), 'FLOOR' || n, 10000 + n, 'GBP', '2026-11-02', 'SDR261030P' || lpad(n::text, 8, '0')
        from generate_series(1, ${entries.length}) n`,
      );
      await part(
        'matches',
        sql`insert into remittance_matches (id, bank_credit_id, payroll_id, pay_date, amount, rule, matched_by)
        select gen_random_uuid(), (select id from bank_credits limit 1), r.payroll_id, r.pay_date, 1, 'exact', 'floor'
        from (select payroll_id, pay_date from remittances limit ${matches}) r`,
      );
      await part('remittances', sql`update remittances set received = expected + 0, status = 'received', version = version + 1`);
    });
    const floorMs = Object.values(floor).reduce((a, b) => a + b, 0);
    process.stdout.write(
      `  floor (${Object.entries(floor)
        .map(([name, ms]) => `${name} ${seconds(ms)} s`)
        .join(', ')}) ${seconds(floorMs).padStart(8)} s\n`,
    );
    process.stdout.write(
      `  import: ${seconds(imported.ms)} s, ${perSecond(entries.length, imported.ms)} credits/s, ${(imported.ms / floorMs).toFixed(2)}x the floor; parse alone ${seconds(parse.ms)} s\n`,
    );
  } finally {
    await db.destroy();
  }
}

await main();
