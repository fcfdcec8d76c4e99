import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composition } from '../../../bin/composition.ts';
import { collectStatus, formatStatus } from '../../../src/faces/cli/status-command.ts';
import { insertRunWithDuePayDates } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { HEARTBEAT_TTL_MS } from '../../../src/faces/workers/worker-heartbeat.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { cliEnvOf, runDeductions } from '../../support/cli.ts';
import { runtimeOf } from '../../support/runtime.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

// `deductions status` answers "is anything working the queues, and when does the nightly run come":
// worker processes leave a heartbeat in Redis under the queue prefix while they run.

let t: TestApp;
let host: WorkerHost | undefined;

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await host?.close();
  await t?.close();
});

const heartbeatKeys = () => t.redis.keys(`${t.config.QUEUE_PREFIX}:heartbeat:*`);

describe('worker heartbeats', () => {
  it('appear while a worker host runs, with a TTL, and disappear when it closes', async () => {
    expect(await heartbeatKeys()).toEqual([]);
    expect((await collectStatus(runtimeOf(t))).workers).toEqual([]);

    host = await composition.startWorkers(runtimeOf(t), { schedule: false });
    const keys = await heartbeatKeys();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${t.config.QUEUE_PREFIX}:heartbeat:.+:${process.pid}$`));
    const ttl = await t.redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(HEARTBEAT_TTL_MS);

    const { workers } = await collectStatus(runtimeOf(t));
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ pid: process.pid });
    expect([...workers[0]!.queues].sort()).toEqual(Object.values(queueNames).sort());
    expect(Date.parse(workers[0]!.last_seen)).toBeGreaterThanOrEqual(Date.parse(workers[0]!.started_at));

    const cli = await runDeductions(['status', '--json', '--check'], cliEnvOf(t.config));
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).workers).toEqual([expect.objectContaining({ pid: process.pid })]);

    await host.close();
    host = undefined;
    expect(await heartbeatKeys()).toEqual([]);
    expect((await collectStatus(runtimeOf(t))).workers).toEqual([]);
  });
});

describe('deductions status', () => {
  it('--json shows no worker alive, the last nightly run and when the next is due; --check then fails', async () => {
    const run = await t.db
      .transaction()
      .execute((trx) => insertRunWithDuePayDates(trx, { id: crypto.randomUUID(), runDate: '2026-11-24', trigger: 'manual', triggeredBy: 'status test' }));

    const cli = await runDeductions(['status', '--json', '--check'], cliEnvOf(t.config));
    expect(cli.code).toBe(1);
    // No worker alive is the one thing that needs attention: --check says so and fails on it.
    expect(cli.stderr).toContain('1 thing needs attention, 1 urgent.');
    const report = JSON.parse(cli.stdout);
    expect(report.workers).toEqual([]);
    expect(report.attention.items).toEqual([
      expect.objectContaining({ kind: 'worker_not_alive', urgency: 'urgent', url: `${t.config.PUBLIC_BASE_URL.replace(/\/$/, '')}/console/queues/` }),
    ]);
    expect(report.lastNightlyRun).toMatchObject({ id: run.id, runDate: '2026-11-24', trigger: 'manual', triggeredBy: 'status test' });
    expect(Date.parse(report.nextNightlyRunAt)).toBeGreaterThan(Date.now() - 60_000);

    // Another schedule and zone, at a fixed instant: Friday afternoon in New York waits for Monday 02:30.
    const runtime = runtimeOf(t);
    runtime.config = { ...t.config, NIGHTLY_CRON: '30 2 * * 1-5', SERVICE_TIME_ZONE: 'America/New_York' };
    const status = await collectStatus(runtime, new Date('2026-11-27T12:00:00Z'));
    expect(status.nextNightlyRunAt).toBe('2026-11-30T07:30:00.000Z');
    expect(status.lastNightlyRun?.id).toBe(run.id);
    const text = formatStatus(status);
    expect(text).toContain('NO WORKER ALIVE');
    expect(text.split('\n').slice(0, 2)).toEqual(['1 thing needs attention, 1 urgent.', expect.stringMatching(/^ {2}URGENT No worker is alive: no job is being worked/)]);
    expect(text).toContain('Next nightly run due: 2026-11-30T07:30:00.000Z (2026-11-30 02:30 America/New_York)');
    expect(text).toMatch(/Last nightly run: 2026-11-24 \(manual\), (unfinished|finished)/);
  });
});
