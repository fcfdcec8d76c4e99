import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/platform/config/config.ts';
import { createDatabase, type Database } from '../../../src/platform/db/connection.ts';
import { runNightlyNow } from '../../../src/faces/workers/nightly-runner.ts';
import { triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { connected, createProducerConnection, producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { composition } from '../../../bin/composition.ts';
import type { Runtime } from '../../../src/platform/runtime/runtime.ts';
import { adminUrl, databaseUrl, testDatabaseName } from '../../support/database-admin.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import { createBiller, createCollectionAccount } from '../../support/factories.ts';
import { createDuePayrolls, deleteQueueKeys, paymentsAndEvents, snapshotCounts } from '../../platform/queue/nightly-fixtures.ts';

const RUN_DATE = '2026-11-18';
const prefix = `test-${randomBytes(4).toString('hex')}`;
const redis = createProducerConnection(parseConfig({}).REDIS_URL);
let original: TestDatabase;
const clones: Array<{ name: string; db: Database }> = [];

/** A runtime over one database, all of them sharing one Redis prefix (so Redis outlives each database). */
function runtimeOn(databaseUrlOf: string, db: Database): Runtime {
  const config = parseConfig({ DATABASE_URL: databaseUrlOf, QUEUE_PREFIX: prefix, LOG_LEVEL: 'silent', NODE_ENV: 'test' });
  return { config, db, redis, logger: pino({ level: 'silent' }), close: async () => {} };
}

/** A backup of the database as it is now, restorable later: a copy made with the original as template. */
async function backUp(source: string): Promise<{ name: string; url: string; db: Database }> {
  const name = testDatabaseName('dtest');
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  try {
    // A template must have no other sessions; the original's pool reconnects on its next query.
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [source]);
    await admin.query(`create database ${name} template ${source}`);
  } finally {
    await admin.end();
  }
  const db = createDatabase(databaseUrl(name), 5);
  clones.push({ name, db });
  return { name, url: databaseUrl(name), db };
}

beforeAll(async () => {
  await connected(redis);
  original = await createTestDatabase();
  await createCollectionAccount(original.db);
});
afterAll(async () => {
  await deleteQueueKeys(redis, prefix);
  redis.disconnect();
  await original?.drop();
  const admin = new pg.Client({ connectionString: adminUrl() });
  await admin.connect();
  for (const clone of clones) {
    await clone.db.destroy();
    await admin.query(`drop database if exists ${clone.name} with (force)`);
  }
  await admin.end();
});

async function expectLockedOnce(db: Database, payrollIds: string[], payments: number) {
  expect(await snapshotCounts(db, payrollIds)).toEqual(Array(payrollIds.length).fill(1));
  const { payments: rows, eventsPerPayment } = await paymentsAndEvents(db, payrollIds);
  expect(rows).toHaveLength(payments);
  expect(rows.every((p) => p.status === 'instructed' && p.attempts === 1)).toBe(true);
  expect([...eventsPerPayment.values()]).toEqual(Array(payments).fill(1));
}

describe('the database, not Redis, says what a nightly run does', () => {
  it('locks again after the database is restored from a backup while Redis kept the finished jobs, and the summary says so', async () => {
    const biller = await createBiller(original.db);
    const { payrollIds, payments } = await createDuePayrolls(original.db, {
      billerClientId: biller.clientId,
      payrolls: 3,
      employeesPerPayroll: 2,
      lockDate: RUN_DATE,
      payDate: '2026-11-27',
    });
    const beforeAnyRun = await backUp(original.name);

    // A run started but not yet worked, backed up in that state.
    const payDates = createQueue(queueNames.payDates, producerConnection(parseConfig({}).REDIS_URL), prefix);
    const { run: started } = await triggerNightlyRun(original.db, payDates, RUN_DATE, { kind: 'manual', by: 'test' });
    await payDates.close();
    const midRun = await backUp(original.name);

    const first = await runNightlyNow(runtimeOn(original.url, original.db), RUN_DATE, { pollMs: 50, startWorkers: composition.startWorkers });
    expect(first).toMatchObject({ runId: started.id, pairs: 3, payrollsLocked: 3, alreadyLocked: 0, paymentsInstructed: payments, failures: [] });
    await expectLockedOnce(original.db, payrollIds, payments);

    // Restored from before the run: nothing is locked, and Redis still holds the first run's
    // completed lock jobs. The run locks everything again and reports it.
    const afterReset = await runNightlyNow(runtimeOn(beforeAnyRun.url, beforeAnyRun.db), RUN_DATE, { pollMs: 50, startWorkers: composition.startWorkers });
    expect(afterReset.runId).not.toBe(started.id);
    expect(afterReset).toMatchObject({ pairs: 3, payrollsLocked: 3, alreadyLocked: 0, paymentsInstructed: payments, failures: [] });
    expect(afterReset.totalsByCurrency).toEqual({ GBP: BigInt(payments * 1_000) });
    await expectLockedOnce(beforeAnyRun.db, payrollIds, payments);

    // Restored from mid-run: the same run, still pending in the database, whose jobs Redis has
    // as completed. Triggering the date joins that run, queues its pay dates again and locks them.
    const afterRestore = await runNightlyNow(runtimeOn(midRun.url, midRun.db), RUN_DATE, { pollMs: 50, startWorkers: composition.startWorkers });
    expect(afterRestore).toMatchObject({ runId: started.id, pairs: 3, payrollsLocked: 3, alreadyLocked: 0, paymentsInstructed: payments, failures: [] });
    await expectLockedOnce(midRun.db, payrollIds, payments);
    const requeues = await midRun.db.selectFrom('nightly_run_pay_dates').select('job_requeues').where('run_id', '=', started.id).execute();
    expect(requeues.map((r) => r.job_requeues)).toEqual([1, 1, 1]);
  });
});
