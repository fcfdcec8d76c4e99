import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compileStatement,
  loadSqlSnapshotFolders,
  renderSqlSnapshotFiles,
  REPOSITORY_ROOT as root,
  SQL_SNAPSHOTS_REFRESH_COMMAND as REFRESH_COMMAND,
} from '../../../src/platform/db/sql-snapshot.ts';
import { lockDeductionDataStatement, type LockInput } from '../../../src/cycle/snapshots/pay-date-lock-statement-repository.ts';

// The checked-in .sql files of the big statements (src/platform/db/sql-snapshot.ts) are what the code sends:
// a change to a statement shows in review as a change to its file. No database needed.

const SQL_SNAPSHOT_FOLDERS = await loadSqlSnapshotFolders();
const rendered = renderSqlSnapshotFiles(SQL_SNAPSHOT_FOLDERS);

function onDisk(path: string): string | null {
  try {
    return readFileSync(join(root, path), 'utf8');
  } catch {
    return null;
  }
}

describe('SQL snapshots', () => {
  it('finds the lock statement among them', () => {
    expect(rendered.has('src/cycle/snapshots/sql/lock_deduction_data.sql')).toBe(true);
  });

  it.each([...rendered.keys()])('%s is up to date', (path) => {
    expect(onDisk(path), `${path} is stale or missing: run \`${REFRESH_COMMAND}\` and commit the file`).toBe(rendered.get(path));
  });

  it('has no file that no statement writes', () => {
    const orphans = SQL_SNAPSHOT_FOLDERS.flatMap(({ folder }) =>
      readdirSync(join(root, folder))
        .filter((name) => name.endsWith('.sql'))
        .map((name) => `${folder}/${name}`)
        .filter((path) => !rendered.has(path)),
    );
    expect(orphans, `no statement writes these: run \`${REFRESH_COMMAND}\` to remove them`).toEqual([]);
  });
});

describe('the lock statement', () => {
  const input = (overrides: Partial<LockInput> = {}): LockInput => ({
    snapshotId: '0193a4f1-0000-7000-8000-000000000001',
    payrollId: '0193a4f1-0000-7000-8000-000000000002',
    payDate: '2026-11-27',
    payPeriod: '8-2026',
    currency: 'GBP',
    collectionAccount: { account_number: '12345678', sort_code: '12-34-56', account_holder_name: 'Collections' },
    supersededSnapshotId: null,
    maxPaymentAmount: 100_000_000,
    maxMandateAmountPerPayDate: 100_000_000,
    maxSnapshotTotal: 999_999_999_999_999,
    refusalReason: 'over the limit',
    ...overrides,
  });

  it('is the same text whatever the pay date (a prepared statement must be): every value is a parameter', () => {
    const first = compileStatement(lockDeductionDataStatement(input()));
    const rerun = compileStatement(
      lockDeductionDataStatement(input({ payDate: '2027-01-29', currency: 'EUR', supersededSnapshotId: '0193a4f1-0000-7000-8000-000000000003', maxPaymentAmount: 5 })),
    );
    expect(rerun.sql).toBe(first.sql);
    expect(first.sql).toMatch(/^\s*\/\* prepared: lock_deduction_data \*\//);
    expect(rerun.parameters).toHaveLength(first.parameters.length);
    expect(rerun.parameters).toContain('2027-01-29');
    expect(rerun.parameters).not.toContain('2026-11-27');
  });

  it('is one statement: its steps are sub-queries of one WITH, then the outcome', () => {
    const { sql } = compileStatement(lockDeductionDataStatement(input()));
    const steps = [...sql.matchAll(/^\s*(?:with\s+)?([a-z_]+) as \(/gm)].map((match) => match[1]);
    expect(steps).toEqual([
      'settled',
      'queued',
      'chosen',
      'over_limit',
      'settled_per_mandate',
      'candidates',
      'mandate_usage',
      'ordered',
      'capped',
      'room',
      'admitted',
      'included',
      'per_employee',
      'snapshot',
      'lines',
      'links',
      'billers',
      'remittance',
      'locked',
      'instructed',
      'refused',
      'released',
      'errored_schedules',
      'changed',
      'events',
      'dequeued',
    ]);
    expect(sql.split(';')).toHaveLength(1);
  });
});
