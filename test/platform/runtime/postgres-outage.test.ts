import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../../src/platform/db/connection.ts';
import { migrateToLatest } from '../../../src/platform/db/migrator.ts';
import { lockPayDateJob, queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { connected, createProducerConnection, producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { createBiller, createCollectionAccount } from '../../support/factories.ts';
import { createPrivatePostgres, freePort, type PrivatePostgres } from '../../support/private-servers.ts';
import { createDuePayrolls, deleteQueueKeys } from '../queue/nightly-fixtures.ts';
import { pause, until } from '../../faces/webhooks/webhook-test-kit.ts';
import { linesWith, startService, type ServiceProcess } from './service-process.ts';

// Real `work` and `serve` processes on a PostgreSQL of this file's own, which is down when they
// start: each waits, says so once, says once when it is back, and then does its work. Redis is the
// shared one (a prefix of this file's own); the shared PostgreSQL is never stopped.

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PAY_DATE = '2099-01-29';
const prefix = `test-${randomBytes(4).toString('hex')}`;
const dir = mkdtempSync(join(tmpdir(), 'postgres-outage-'));
const processes: ServiceProcess[] = [];
let postgres: PrivatePostgres | undefined;
let redis: Redis | undefined;
let payrollId: string;

beforeAll(async () => {
  postgres = await createPrivatePostgres();
  await postgres.start();
  const db = createDatabase(postgres.url, 2);
  try {
    await migrateToLatest(db);
    await createCollectionAccount(db);
    const biller = await createBiller(db);
    // Its lock date is far off, so no nightly run or catch-up takes it: only the job this test queues.
    [payrollId] = (await createDuePayrolls(db, { billerClientId: biller.clientId, payrolls: 1, employeesPerPayroll: 2, lockDate: '2099-01-15', payDate: PAY_DATE }))
      .payrollIds as [string];
  } finally {
    await db.destroy();
  }
  redis = await connected(createProducerConnection(REDIS_URL));
}, 120_000);

afterAll(async () => {
  for (const service of processes) await service.kill('SIGKILL');
  if (redis) {
    await deleteQueueKeys(redis, prefix);
    redis.disconnect();
  }
  await postgres?.destroy();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const linesOf = (service: ServiceProcess, event: 'dependency_down' | 'dependency_up') => linesWith(service.lines, { event }).filter((line) => line.dependency === 'postgres');
/** What an operator must never see: ioredis's unhandled-error dump, or any stack trace. */
const noiseIn = (stderr: string[]) => stderr.join('').match(/\[ioredis\] Unhandled error event|^\s+at /m);

async function lockedAt(): Promise<Date | null> {
  const db: Database = createDatabase(postgres!.url, 1);
  try {
    const row = await db.selectFrom('pay_dates').select('locked_at').where('payroll_id', '=', payrollId).where('pay_date', '=', PAY_DATE).executeTakeFirstOrThrow();
    return row.locked_at;
  } finally {
    await db.destroy();
  }
}

describe('a worker process started while PostgreSQL is down', () => {
  it('waits with one line, takes no job meanwhile, says once that it is back, then does the job', async () => {
    await postgres!.stop('fast');
    const worker = startService('work', { DATABASE_URL: postgres!.url, REDIS_URL, QUEUE_PREFIX: prefix });
    processes.push(worker);

    const down = await worker.waitForLine((line) => line.event === 'dependency_down' && line.dependency === 'postgres');
    expect(down.msg).toMatch(/^postgres unavailable/);
    expect(String(down.error)).toContain('ECONNREFUSED');

    // Work arrives while the database is away: it waits in the queue, no attempt is spent on it.
    const payDates = createQueue(queueNames.payDates, producerConnection(REDIS_URL), prefix);
    try {
      await payDates.add(lockPayDateJob, { payrollId, payDate: PAY_DATE }, { jobId: 'lock-while-postgres-is-down' });
      await pause(3_000);
      expect(worker.child.exitCode).toBeNull();
      expect(linesOf(worker, 'dependency_down')).toHaveLength(1);
      expect(await payDates.getJobState('lock-while-postgres-is-down')).toBe('waiting');
      expect(linesWith(worker.lines, {}).filter((line) => String(line.msg).startsWith('job failed'))).toEqual([]);
      expect(noiseIn(worker.stderr)).toBeNull();

      await postgres!.start();
      const up = await worker.waitForLine((line) => line.event === 'dependency_up' && line.dependency === 'postgres');
      expect(up.msg).toBe('postgres available again');
      expect(up.downForMs).toEqual(expect.any(Number));

      await until(
        () => payDates.getJobState('lock-while-postgres-is-down'),
        (state) => state === 'completed',
        20_000,
      );
      const job = await payDates.getJob('lock-while-postgres-is-down');
      expect(job?.returnvalue).toMatchObject({ payrollId, payDate: PAY_DATE, created: true, paymentsInstructed: 2 });
      expect(await lockedAt()).toBeInstanceOf(Date);
    } finally {
      await payDates.close();
    }

    expect(linesWith(worker.lines, {}).filter((line) => String(line.msg).startsWith('job failed'))).toEqual([]);
    expect(linesOf(worker, 'dependency_down')).toHaveLength(1);
    expect(linesOf(worker, 'dependency_up')).toHaveLength(1);
    expect(await worker.kill('SIGTERM')).toBe(0);
    expect(worker.stderr.join('')).toBe('');
  }, 60_000);
});

describe('serve started while PostgreSQL is down', () => {
  it('listens, answers /readyz 503 with one line, and once PostgreSQL is back says so once and is ready', async () => {
    await postgres!.stop('fast');
    const port = await freePort();
    const service = startService('serve', {
      DATABASE_URL: postgres!.url,
      REDIS_URL,
      QUEUE_PREFIX: prefix,
      HOST: '127.0.0.1',
      PORT: String(port),
      AUTH_SIGNING_KEY_FILE: join(dir, 'serve-key.pem'),
    });
    processes.push(service);
    const url = `http://127.0.0.1:${port}`;
    await service.waitForLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));

    await service.waitForLine(() => linesOf(service, 'dependency_down').length === 1);
    expect((await fetch(`${url}/readyz`)).status).toBe(503);
    await pause(2_000);
    expect(linesOf(service, 'dependency_down')).toHaveLength(1);

    await postgres!.start();
    const up = await service.waitForLine((line) => line.event === 'dependency_up' && line.dependency === 'postgres');
    expect(up.msg).toBe('postgres available again');
    await until(
      () => fetch(`${url}/readyz`).then((response) => response.status),
      (status) => status === 200,
      10_000,
    );
    expect(linesOf(service, 'dependency_down')).toHaveLength(1);
    expect(linesOf(service, 'dependency_up')).toHaveLength(1);
    expect(noiseIn(service.stderr)).toBeNull();

    expect(await service.kill('SIGTERM')).toBe(0);
    expect(service.stderr.join('')).toBe('');
  }, 60_000);
});
