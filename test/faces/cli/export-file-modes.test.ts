import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportPayouts, exportReconciliation, exportThreeWay } from '../../../src/faces/cli/export-commands.ts';
import { privateFileStream, writePrivateFile } from '../../../src/faces/cli/private-file.ts';
import { openImportErrorFile } from '../../../src/directory/payrolls/employee-import-error-file.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { createBiller, createCollectionAccount, createPayoutRow } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// Payment files carry every beneficiary's account number, reports and instruction files people's
// money: what `--out` writes is the operator's alone (0600), whatever the umask, and a file that was
// there before with wider rights is narrowed before anything is written into it.

let t: TestApp;
let directory: string;
const previousUmask = process.umask(0o022);

beforeAll(async () => {
  t = await startTestApp();
  await createCollectionAccount(t.db);
  directory = await mkdtemp(join(tmpdir(), 'export-modes-'));
});
afterAll(async () => {
  process.umask(previousUmask);
  await rm(directory, { recursive: true, force: true });
  await t?.close();
});

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

/** A file someone left readable by all, where the next export will go. */
async function worldReadable(name: string): Promise<string> {
  const file = join(directory, name);
  await writeFile(file, 'old content that is longer than what comes next\n');
  await chmod(file, 0o644);
  return file;
}

describe('private output files', () => {
  it('are created 0600, and an existing 0644 file is narrowed and emptied', async () => {
    const created = join(directory, 'new.txt');
    await writePrivateFile(created, 'secret');
    expect(await modeOf(created)).toBe(0o600);

    const existing = await worldReadable('existing.txt');
    await writePrivateFile(existing, 'short');
    expect(await modeOf(existing)).toBe(0o600);
    expect(await readFile(existing, 'utf8')).toBe('short');

    const streamed = await worldReadable('streamed.txt');
    const stream = await privateFileStream(streamed);
    expect(await modeOf(streamed)).toBe(0o600);
    await new Promise<void>((resolve, reject) => stream.end('rows\n', (error?: Error | null) => (error ? reject(error) : resolve())));
    expect(await readFile(streamed, 'utf8')).toBe('rows\n');
  });
});

describe('export --out', () => {
  it('writes payment files, reconciliation and three-way reports readable by their owner only', async () => {
    const day = '2026-11-18';
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: day, amount: 4_321 });

    const payouts = await worldReadable('payouts.csv');
    await exportPayouts(t.db, { date: day, out: payouts });
    expect(await modeOf(payouts)).toBe(0o600);
    expect(await readFile(payouts, 'utf8')).toContain('43.21');

    const pain = join(directory, 'payouts.xml');
    await exportPayouts(t.db, { date: day, out: pain, format: 'pain.001' });
    expect(await modeOf(pain)).toBe(0o600);

    const reconciliation = join(directory, 'reconciliation.csv');
    await exportReconciliation(t.db, { payDate: day, out: reconciliation });
    expect(await modeOf(reconciliation)).toBe(0o600);
    const summary = await worldReadable('summary.csv');
    await exportReconciliation(t.db, { payDate: day, summary: true, out: summary });
    expect(await modeOf(summary)).toBe(0o600);

    const threeWay = join(directory, 'three-way.csv');
    await exportThreeWay(t.db, { payDate: day, out: threeWay });
    expect(await modeOf(threeWay)).toBe(0o600);
  });

  it('`deductions export payouts --out` leaves a 0600 file, also under a permissive umask', { timeout: 120_000 }, async () => {
    const day = '2026-11-17';
    await createPayoutRow(t.db, { billerClientId: (await createBiller(t.db)).clientId, payoutDate: day, amount: 1_234 });
    const out = join(directory, 'cli-payouts.xml');
    const permissive = process.umask(0);
    try {
      const cli = await runDeductions(['export', 'payouts', '--date', day, '--format', 'pain.001', '--out', out], cliEnvOf(t.config));
      expect(cli.code, cli.stderr).toBe(0);
    } finally {
      process.umask(permissive);
    }
    expect(await modeOf(out)).toBe(0o600);
  });
});

describe('the bad rows of an employee import (--errors-out)', () => {
  it('are written 0600, an existing world-readable file narrowed first', async () => {
    const file = await worldReadable('errors.csv');
    const out = await openImportErrorFile(file);
    await out.write([{ line: 2, column: 'email', reason: 'not an email' }]);
    await out.close();
    expect(await modeOf(file)).toBe(0o600);
    expect(await readFile(file, 'utf8')).toContain('not an email');
  });
});
