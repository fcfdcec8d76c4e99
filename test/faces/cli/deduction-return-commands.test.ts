import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { filledIn, lockedReturnWorld, PAY_DATE, type ReturnWorld } from '../../cycle/deduction-returns/return-world.ts';

// `deductions export deduction-return` and `deductions deduction-returns import`, run as an operator
// runs them: the files-only payroll's report of what it deducted, from the pre-filled file to the
// pay date's confirmation.

let t: TestApp;
let queue: Queue;
let world: ReturnWorld;
const scratch = mkdtempSync(join(tmpdir(), 'deduction-returns-'));

beforeAll(async () => {
  t = await startTestApp();
  queue = new Queue('pay-dates', { connection: { url: t.config.REDIS_URL }, prefix: t.config.QUEUE_PREFIX });
  world = await lockedReturnWorld(t.db, [12_550, 3_001]);
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await queue?.close();
  await t?.close();
});

const deductions = (args: string[]) => runDeductions(args, cliEnvOf(t.config));
/** Each test spawns several `deductions` processes (seconds each when the sources are run through tsx). */
const SPAWNING_TIMEOUT_MS = 90_000;
const importArgs = (file: string, ...more: string[]) => ['deduction-returns', 'import', '--payroll', world.payrollId, '--pay-date', PAY_DATE, '--file', file, ...more];

describe('deductions export deduction-return and deduction-returns import', () => {
  it(
    'writes the pre-filled file, checks the clerk’s edit with --dry-run, confirms it, and changes nothing the second time',
    async () => {
      const prefilled = join(scratch, 'return.csv');
      const exported = await deductions(['export', 'deduction-return', '--payroll', world.payrollId, '--pay-date', PAY_DATE, '--out', prefilled]);
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stderr).toMatch(/^Wrote \S+_deduction-return\.csv \(sha256 [0-9a-f]{64}\) to /);
      expect(statSync(prefilled).mode & 0o777).toBe(0o600);
      const [first, second] = world.people as [ReturnWorld['people'][number], ReturnWorld['people'][number]];
      const edited = join(scratch, 'edited.csv');
      writeFileSync(edited, filledIn(readFileSync(prefilled), { [second.payrollReference]: { deducted: '20.00', leaver: 'y' } }));

      const dry = await deductions(importArgs(edited, '--dry-run'));
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout.split('\n')[0]).toBe(
        `Dry run, nothing written: would confirm pay date ${PAY_DATE} (instruction file version 1): 2 employees (1 in full, 1 partly, 0 not deducted, 1 leaver): £145.50 deducted of £155.51 asked`,
      );
      expect(await t.db.selectFrom('confirmations').select('id').where('payroll_id', '=', world.payrollId).execute()).toEqual([]);

      await queue.obliterate({ force: true });
      const imported = await deductions(importArgs(edited, '--by', 'Olive Operator', '--reason', 'Northwind sent it by email'));
      expect(imported.code, imported.stderr).toBe(0);
      const lines = imported.stdout.trim().split('\n');
      expect(lines[0]).toBe(
        `Confirmed pay date ${PAY_DATE} (instruction file version 1): 2 employees (1 in full, 1 partly, 0 not deducted, 1 leaver): £145.50 deducted of £155.51 asked`,
      );
      expect(lines[2]).toMatch(/^ {2}confirmation [0-9a-f-]{36} \(import [0-9a-f-]{36}\); reconciliation follows$/);
      const confirmation = await t.db.selectFrom('confirmations').selectAll().where('payroll_id', '=', world.payrollId).executeTakeFirstOrThrow();
      expect(confirmation).toMatchObject({ submitted_by: 'Olive Operator', submitted_by_client_id: null, total_amount: 14_550 });
      const records = await t.db
        .selectFrom('deduction_records')
        .select(['employee_id', 'deduction_amount', 'leaver'])
        .where('confirmation_id', '=', confirmation.id)
        .execute();
      expect(records.find((row) => row.employee_id === first.employeeId)).toMatchObject({ deduction_amount: 12_550, leaver: false });
      expect(records.find((row) => row.employee_id === second.employeeId)).toMatchObject({ deduction_amount: 2_000, leaver: true });
      const audit = await t.db.selectFrom('audit_log').selectAll().where('action', '=', 'deduction_return.imported').executeTakeFirstOrThrow();
      expect(audit).toMatchObject({ actor: 'Olive Operator', reason: 'Northwind sent it by email' });
      // The workers reconcile it, as after the provider's own confirmation.
      const jobs = (await queue.getJobs(['delayed', 'waiting', 'prioritized'])).filter((job) => job.name === 'reconcile-pay-date');
      expect(jobs.map((job) => job.data)).toEqual([{ payrollId: world.payrollId, payDate: PAY_DATE }]);

      const again = await deductions(importArgs(edited, '--by', 'Olive Operator'));
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(
        `Already imported, nothing changed: the current records of pay date ${PAY_DATE} (instruction file version 1) already say what this file says`,
      );
      expect(again.stdout).toMatch(/this file was imported before: [0-9a-f-]{36} at \S+ by Olive Operator/);
      expect(await t.db.selectFrom('confirmations').select('id').where('payroll_id', '=', world.payrollId).execute()).toHaveLength(1);
    },
    SPAWNING_TIMEOUT_MS,
  );

  it(
    'lists every bad record with its line and column, refuses the file (exit 1), and writes the errors to --errors-out',
    async () => {
      const other = await lockedReturnWorld(t.db, [5_000, 7_000]);
      const exported = await deductions(['export', 'deduction-return', '--payroll', other.payrollId, '--pay-date', PAY_DATE]);
      expect(exported.code, exported.stderr).toBe(0);
      const bad = join(scratch, 'bad.csv');
      const [first, second] = other.people as [ReturnWorld['people'][number], ReturnWorld['people'][number]];
      writeFileSync(
        bad,
        filledIn(exported.stdout, { [first.payrollReference]: { deducted: '£50.00' }, [second.payrollReference]: { deducted: '-3', leaver: 'maybe' } }, { keepTrailer: true }),
      );
      const errorsOut = join(scratch, 'errors.csv');
      const refused = await runDeductions(
        ['deduction-returns', 'import', '--payroll', other.payrollId, '--pay-date', PAY_DATE, '--file', bad, '--errors-out', errorsOut],
        cliEnvOf(t.config),
      );
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe('2 of 2 items are bad (3 errors); nothing was confirmed. Fix them, or ask for partial application to confirm the good items\n');
      expect(refused.stdout).toContain('Refused, nothing confirmed: 3 errors in 2 items (2 bad)');
      expect(refused.stdout).toContain('  line 3, amount_deducted: must be an amount in GBP such as 25.50, without a currency symbol or sign, got £50.00');
      expect(refused.stdout).toContain('  line 4, amount_deducted: must not be negative, got -3');
      expect(refused.stdout).toContain('  line 4, leaver: must be yes or no (or y, n, true, false), got maybe');
      expect(refused.stdout).toContain(`  all 3 errors are in ${errorsOut}`);
      expect(readFileSync(errorsOut, 'utf8').split('\n').slice(0, 4)).toEqual([
        'line,column,reason',
        '3,amount_deducted,"must be an amount in GBP such as 25.50, without a currency symbol or sign, got £50.00"',
        '4,amount_deducted,"must not be negative, got -3"',
        '4,leaver,"must be yes or no (or y, n, true, false), got maybe"',
      ]);
      expect(await t.db.selectFrom('confirmations').select('id').where('payroll_id', '=', other.payrollId).execute()).toEqual([]);

      const json = await deductions(['deduction-returns', 'import', '--payroll', other.payrollId, '--pay-date', PAY_DATE, '--file', bad, '--dry-run', '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ outcome: 'refused', dry_run: true, error_count: 3, rows: 2, rejected: 2 });
    },
    SPAWNING_TIMEOUT_MS,
  );

  it(
    'says in one line what cannot be imported at all: an unreadable file, a pay date without an instruction file',
    async () => {
      const missing = await deductions(importArgs(join(scratch, 'no-such-file.csv')));
      expect(missing.code).toBe(1);
      expect(missing.stderr).toBe(`Cannot read ${join(scratch, 'no-such-file.csv')}: ENOENT\n`);
      const file = join(scratch, 'any.csv');
      writeFileSync(file, 'record_type\r\n');
      const early = await deductions(['deduction-returns', 'import', '--payroll', world.payrollId, '--pay-date', '2027-01-28', '--file', file]);
      expect(early.code).toBe(1);
      expect(early.stderr).toBe('Pay date 2027-01-28 has no instruction file to answer yet: it is locked on 2027-01-18, ahead of the payroll cut-off on 2027-01-21\n');
    },
    SPAWNING_TIMEOUT_MS,
  );
});
