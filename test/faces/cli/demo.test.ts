import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { runDemo } from '../../../src/faces/cli/demo/demo.ts';
import { parseConfig, type Config } from '../../../src/platform/config/config.ts';
import { adminUrl, testDatabaseName } from '../../support/database-admin.ts';
import { moneyInWordsFaults } from '../../support/money-in-words.ts';

// `npm run demo` as a finance clerk reads it, run whole on a database, key prefix and folder of its
// own: money in words, remittances worded by their status, instruction files named for the employer,
// payroll and pay date, keyed by works number.

const database = testDatabaseName('dtest');
const queuePrefix = `test-demo-${randomBytes(4).toString('hex')}`;
const filesDir = mkdtempSync(path.join(tmpdir(), 'demo-'));
let base: Config;
const lines: string[] = [];

beforeAll(async () => {
  base = parseConfig({ DATABASE_URL: adminUrl(), LOG_LEVEL: 'silent', NODE_ENV: 'test' });
  // The same story on a third of the employees: every step, in less time.
  await runDemo(base, composition, (line = '') => lines.push(line), { database, queuePrefix, filesDir, employeesPerPayroll: 10 });
}, 240_000);

afterAll(async () => {
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    await admin.query(`drop database if exists "${database}" with (force)`);
  } finally {
    await admin.end();
  }
  const redis = new Redis(base.REDIS_URL);
  try {
    const keys = await redis.keys(`${queuePrefix}:*`);
    for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
  } finally {
    redis.disconnect();
  }
  rmSync(filesDir, { recursive: true, force: true });
});

/** The lines of one numbered step, up to the next. */
function step(number: number): string[] {
  const start = lines.findIndex((line) => line.startsWith(`${number}. `));
  const end = lines.findIndex((line, index) => index > start && /^\d+\. /.test(line));
  return lines.slice(start, end === -1 ? undefined : end);
}

describe('npm run demo', () => {
  it('says every amount in major units with its currency', () => {
    expect(lines.length).toBeGreaterThan(50);
    expect(lines.flatMap(moneyInWordsFaults)).toEqual([]);
    expect(lines.join('\n')).toMatch(/£\d{1,3}(,\d{3})*\.\d{2}/);
  });

  it('words each unpaid remittance by its status: late only when the table says late', () => {
    const remittances = step(7);
    // The table: employer, payroll, pay date, expected, received, status.
    const table = new Map(
      remittances
        .map((line) => /^ {2}(.+?) +(\S+ payroll) +(\d{4}-\d{2}-\d{2}) +\S+ +\S+ (\w+)$/.exec(line))
        .filter((match) => match !== null)
        .map((match) => [`${match[1]}|${match[2]}|${match[3]}`, match[4]!]),
    );
    expect(table.size).toBeGreaterThan(0);
    // "<employer> has not paid yet:", then one line per pay date in its own words.
    let employer = '';
    let worded = 0;
    for (const line of remittances) {
      const owing = /^ {2}(.+) has not paid yet:$/.exec(line);
      if (owing) employer = owing[1]!;
      const unpaid = /^ {4}(\S+ payroll) pay date (\d{4}-\d{2}-\d{2}) \(\w+\): (.*)$/.exec(line);
      if (!unpaid) continue;
      const status = table.get(`${employer}|${unpaid[1]}|${unpaid[2]}`);
      expect(status, line).toBeDefined();
      expect(unpaid[3]!.startsWith(`${status}:`), line).toBe(true);
      worded += 1;
    }
    expect(worded).toBeGreaterThan(0);
    expect(step(7).join('\n')).not.toContain('its remittance is late');
  });

  it('names instruction files for the employer, payroll and pay date, and keys them by works number', () => {
    const files = readdirSync(path.join(filesDir, 'instructions'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      expect(file).toMatch(/^[a-z0-9-]+_[a-z0-9-]+-payroll_\d{4}-\d{2}-\d{2}_v\d+\.csv$/);
      const items = readFileSync(path.join(filesDir, 'instructions', file), 'utf8')
        .split('\r\n')
        .filter((row) => row.startsWith('item,'));
      for (const item of items) expect(item.split(',')[1], `${file}: ${item}`).toMatch(/^\d{6}$/);
    }
    expect(step(4).some((line) => line.includes(files[0]!))).toBe(true);
  });
});
