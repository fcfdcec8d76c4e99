import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmployer, createPayroll, createPayrollProvider } from '../../support/factories.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// Each case runs the real `deductions` command as an operator would, against this file's private
// database and queue prefix. Starting tsx costs about a second, so every case starts at once.

const bin = new URL('../../../bin/deductions.mjs', import.meta.url).pathname;
const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function deductions(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const portOf = (server: Server) => (server.address() as { port: number }).port;

/** A port nothing listens on: bound by us, then released. */
async function closedPort(): Promise<number> {
  const server = await listen();
  const port = portOf(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The one line a failed command printed: no stack frames, nothing else. */
function onlyLine(run: Run): string {
  expect(run.stderr).not.toMatch(/^\s+at /m);
  const lines = run.stderr.replace(/\n$/, '').split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

let t: TestApp;
let busy: Server;
let keyDir: string;
const unknownProvider = randomUUID();
let payrollId: string;
let postgresPort: number;
let redisPort: number;
const runs: Record<string, Run> = {};

beforeAll(async () => {
  t = await startTestApp();
  const provider = await createPayrollProvider(t.db);
  const employer = await createEmployer(t.db, provider.id);
  const payroll = await createPayroll(t.db, {
    providerId: provider.id,
    employerId: employer.id,
    payDates: [{ pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026', lock_date: '2026-12-15' }],
  });
  payrollId = payroll.id;
  busy = await listen();
  [postgresPort, redisPort] = [await closedPort(), await closedPort()];
  keyDir = mkdtempSync(join(tmpdir(), 'deductions-cli-'));

  const env = {
    DATABASE_URL: t.config.DATABASE_URL,
    REDIS_URL: t.config.REDIS_URL,
    QUEUE_PREFIX: t.config.QUEUE_PREFIX,
    AUTH_SIGNING_KEY_FILE: join(keyDir, 'signing-key.pem'),
    LOG_LEVEL: 'silent',
  };
  const cases: Record<string, [string[], Record<string, string>]> = {
    unknownProvider: [['clients', 'create', '--name', 'P', '--role', 'payroll_provider', '--payroll-provider', unknownProvider], env],
    payrollNotUuid: [['export', 'instructions', '--payroll', 'nope', '--pay-date', '2026-12-24'], env],
    neverLocked: [['rerun', '--payroll', payrollId, '--pay-date', '2026-12-24', '--reason', 'fix'], env],
    postgresDown: [
      ['export', 'instructions', '--payroll', payrollId, '--pay-date', '2026-12-24'],
      { ...env, DATABASE_URL: `postgres://postgres:s3cret-pw@127.0.0.1:${postgresPort}/deductions` },
    ],
    postgresDownMigrate: [['migrate'], { ...env, DATABASE_URL: `postgres://postgres:s3cret-pw@127.0.0.1:${postgresPort}/deductions` }],
    redisDown: [['rerun', '--payroll', payrollId, '--pay-date', '2026-12-24', '--reason', 'fix'], { ...env, REDIS_URL: `redis://127.0.0.1:${redisPort}` }],
    badCron: [['work'], { ...env, NIGHTLY_CRON: '0 25 * * *' }],
    portInUse: [['serve'], { ...env, HOST: '127.0.0.1', PORT: String(portOf(busy)) }],
    unknownCommand: [['frobnicate'], env],
    fileVersion: [['export', 'instructions', '--payroll', payrollId, '--pay-date', '2026-12-24', '--version', '2'], env],
    version: [['--version'], { ...env, NIGHTLY_CRON: 'not checked for --version' }],
  };
  const entries = await Promise.all(Object.entries(cases).map(async ([name, [args, caseEnv]]) => [name, await deductions(args, caseEnv)] as const));
  for (const [name, run] of entries) runs[name] = run;
}, 120_000);

afterAll(async () => {
  await new Promise((resolve) => busy?.close(resolve));
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  await t.close();
});

describe('a failed command prints one line naming the problem and exits non-zero', () => {
  it('clients create with a payroll provider that does not exist', () => {
    expect(onlyLine(runs.unknownProvider!)).toBe(`payroll_provider_id ${unknownProvider} is not a known payroll provider`);
    expect(runs.unknownProvider!.code).toBe(1);
  });

  it('an id that is not a UUID', () => {
    expect(onlyLine(runs.payrollNotUuid!)).toBe("error: option '--payroll <id>' argument 'nope' is invalid. expected a UUID");
    expect(runs.payrollNotUuid!.code).toBe(1);
  });

  it('a re-run of a pay date that was never locked', () => {
    expect(onlyLine(runs.neverLocked!)).toBe(`payroll ${payrollId} pay date 2026-12-24 has not been locked; there is nothing to re-run`);
    expect(runs.neverLocked!.code).toBe(1);
  });

  it('PostgreSQL unreachable, named without its password', () => {
    for (const run of [runs.postgresDown!, runs.postgresDownMigrate!]) {
      expect(onlyLine(run)).toBe(`Cannot reach PostgreSQL at 127.0.0.1:${postgresPort} (connection refused)`);
      expect(run.stderr + run.stdout).not.toContain('s3cret-pw');
      expect(run.code).toBe(69);
    }
  });

  it('Redis unreachable', () => {
    expect(onlyLine(runs.redisDown!)).toBe(`Cannot reach Redis at 127.0.0.1:${redisPort} (connection refused)`);
    expect(runs.redisDown!.code).toBe(69);
  });

  it('an invalid NIGHTLY_CRON, checked with the rest of the configuration', () => {
    expect(onlyLine(runs.badCron!)).toBe('Invalid configuration: NIGHTLY_CRON is not a cron pattern: Constraint error, got value 25 expected range 0-23 (got "0 25 * * *")');
    expect(runs.badCron!.code).toBe(78);
  });

  it('serve on a port in use', () => {
    expect(onlyLine(runs.portInUse!)).toBe(`Port ${portOf(busy)} on 127.0.0.1 is already in use`);
    expect(runs.portInUse!.code).toBe(69);
  });

  it("commander's own errors, without the help text after them", () => {
    expect(onlyLine(runs.unknownCommand!)).toBe("error: unknown command 'frobnicate'");
    expect(runs.unknownCommand!.code).toBe(1);
  });
});

describe('deductions --version', () => {
  it('prints the package version, without needing a valid configuration', () => {
    expect(runs.version).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it("after a command is that command's option: export instructions --version is the file version", () => {
    expect(onlyLine(runs.fileVersion!)).toBe(`No instruction file for payroll ${payrollId} on 2026-12-24`);
    expect(runs.fileVersion!.code).toBe(1);
  });
});
