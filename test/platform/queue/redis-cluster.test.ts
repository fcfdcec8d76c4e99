import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunProgress } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { loadNightlySummary, triggerNightlyRun } from '../../../src/cycle/nightly/nightly-service.ts';
import { hashTaggedPrefix, parseConfig, type Config } from '../../../src/platform/config/config.ts';
import { connected, createProducerConnection, producerConnection, type RedisClient } from '../../../src/platform/runtime/redis-connections.ts';
import { queueNames, reconcilePayDateJob, runPayoutsJob } from '../../../src/platform/queue/job-catalogue.ts';
import { enqueueJob } from '../../../src/platform/queue/job-contract.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import type { Runtime } from '../../../src/platform/runtime/runtime.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { listLiveWorkers } from '../../../src/faces/workers/worker-heartbeat.ts';
import { composition } from '../../../bin/composition.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../../src/faces/webhooks/webhook-receiver.ts';
import { createCollectionAccount } from '../../support/factories.ts';
import { freePort } from '../../support/private-servers.ts';
import { giveBillerAnAccount } from '../../support/cash.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';
import { createWorld, PD1 } from '../../cycle/reconciliation/reconciliation-world.ts';
import { newBiller, registerEndpoint, until } from '../../faces/webhooks/webhook-test-kit.ts';
import { createDuePayrolls, paymentsAndEvents, snapshotCounts, todayInServiceZone } from './nightly-fixtures.ts';

/**
 * The queue on a Redis Cluster of its own: three masters with a replica each, on loopback ports.
 * The workers run the nightly lock, webhooks, a reconciliation and a payout run through it while the
 * master holding the queue's slot fails over (its replica takes over, then the old master is
 * killed), and every effect, counted by
 * the database's unique constraints, happens once. Run alone: npx vitest run --config test/vitest.config.ts test/platform/queue/redis-cluster.test.ts
 */

const run = promisify(execFile);
/** A master silent this long is failed over: short, so the test does not wait the default 15 s. */
const NODE_TIMEOUT_MS = 1_000;

interface ClusterNode {
  port: number;
  child: ChildProcess;
}

let dir: string;
const nodes: ClusterNode[] = [];
let t: TestApp;
let hooks: WebhookReceiver;
let host: WorkerHost | undefined;
let redis: RedisClient | undefined;

async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
}

async function startNode(port: number): Promise<ClusterNode> {
  const child = spawn(
    'redis-server',
    [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--cluster-enabled', 'yes',
      '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
      '--appendonly', 'yes', '--appendfilename', `appendonly-${port}.aof`, '--appenddirname', `aof-${port}`,
      '--save', '', '--maxmemory-policy', 'noeviction', '--daemonize', 'no',
    ],
    { stdio: 'ignore' },
  ); // prettier-ignore
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null || attempt > 100) throw new Error(`redis-server on ${port} did not start`);
    if ((await cli(port, 'ping').catch(() => '')).trim() === 'PONG') return { port, child };
    await sleep(50);
  }
}

async function clusterState(port: number): Promise<string> {
  return /cluster_state:(\w+)/.exec(await cli(port, 'cluster', 'info'))?.[1] ?? 'unknown';
}

/** The master serving a slot, by port, from a live node's CLUSTER SHARDS-free view (CLUSTER SLOTS). */
async function masterOfSlot(askPort: number, slot: number): Promise<number> {
  const lines = (await cli(askPort, 'cluster', 'nodes')).trim().split('\n');
  for (const line of lines) {
    const [, address, flags, , , , , state, ...ranges] = line.split(' ');
    if (!flags!.includes('master') || flags!.includes('fail') || state !== 'connected') continue;
    for (const range of ranges) {
      const [from, to] = range.split('-').map(Number);
      if (slot >= from! && slot <= (to ?? from!)) return Number(address!.split(':')[1]!.split('@')[0]);
    }
  }
  throw new Error(`no master serves slot ${slot}`);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'redis-cluster-'));
  const ports: number[] = [];
  while (ports.length < 6) {
    const port = await freePort();
    // The cluster bus listens on port + 10000: both must be free, and distinct from the others'.
    if (port < 55_000 && !ports.includes(port)) ports.push(port);
  }
  nodes.push(...(await Promise.all(ports.map(startNode))));
  await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes']);
  await until(
    () => Promise.all(ports.map(clusterState)),
    (states) => states.every((state) => state === 'ok'),
    20_000,
  );
  t = await startTestApp();
  await createCollectionAccount(t.db);
  hooks = await startWebhookReceiver();
}, 60_000);

afterAll(async () => {
  // Bounded: a worker host closing against a cluster that lost a node must not hold the servers up.
  if (host) await Promise.race([host.close().catch(() => {}), sleep(10_000)]);
  redis?.disconnect();
  await hooks?.close();
  await t?.close();
  for (const node of nodes) if (node.child.exitCode === null) node.child.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const PAYROLLS = 30;
const EMPLOYEES = 4;

describe('the queue on a Redis Cluster', () => {
  it('hash-tags the prefix on a cluster only, and reads the seeds', () => {
    const clustered = parseConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000, [::1]:7001', QUEUE_PREFIX: 'deductions' });
    expect(clustered.QUEUE_PREFIX).toBe('{deductions}');
    expect(clustered.REDIS_CLUSTER_NODES).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '::1', port: 7001 },
    ]);
    expect(parseConfig({ QUEUE_PREFIX: 'deductions' }).QUEUE_PREFIX).toBe('deductions');
    expect(hashTaggedPrefix('{tenant-a}:deductions')).toBe('{tenant-a}:deductions');
    expect(hashTaggedPrefix('a{}b')).toBe('{a{}b}');
    expect(() => parseConfig({ REDIS_CLUSTER_NODES: '127.0.0.1' })).toThrow(/REDIS_CLUSTER_NODES must be host:port/);
  });

  it('runs the nightly, webhooks, a reconciliation and payouts through a master failover, each once', async () => {
    const config: Config = {
      ...t.config,
      REDIS_CLUSTER_NODES: nodes.slice(0, 2).map((node) => ({ host: '127.0.0.1', port: node.port })),
      QUEUE_PREFIX: hashTaggedPrefix(t.config.QUEUE_PREFIX),
    };
    redis = await connected(createProducerConnection(config));
    const runtime: Runtime = { config, db: t.db, redis, logger: pino({ level: 'silent' }), close: async () => {} };

    const biller = await newBiller(t);
    await registerEndpoint(t, biller.headers, hooks);
    const runDate = todayInServiceZone();
    const { payrollIds, payments } = await createDuePayrolls(t.db, {
      billerClientId: biller.clientId,
      payrolls: PAYROLLS,
      employeesPerPayroll: EMPLOYEES,
      lockDate: runDate,
      payDate: '2099-01-29',
    });

    const payDates = createQueue(queueNames.payDates, producerConnection(config), config.QUEUE_PREFIX);
    const maintenance = createQueue(queueNames.maintenance, producerConnection(config), config.QUEUE_PREFIX);
    try {
      const { run: nightly } = await triggerNightlyRun(t.db, payDates, runDate, { kind: 'manual', by: 'test' });
      // Made after the run was triggered, so the run's pay dates are the ones above. A trusted employer's pay date, locked and reported deducted: reconciled and paid out through the queue.
      const w = await createWorld(t.db, { employees: 3 });
      await t.db.updateTable('employers').set({ payout_funding: 'deducted' }).where('id', '=', w.employer.id).execute();
      for (const [index, amount] of [1_000, 2_000, 3_000].entries()) await w.payment(index, amount);
      await w.lock(PD1);
      for (const [index, amount] of [1_000, 2_000, 3_000].entries()) await w.push(w.people[index]!.employee.id, PD1, amount);
      await giveBillerAnAccount(t.db, w.biller.clientId);
      host = await composition.startWorkers(runtime, { schedule: true, payDateConcurrency: 1, watchdog: { intervalMs: 200, undispatchedAfterMs: 1_000 } });
      expect((await listLiveWorkers(redis, config.QUEUE_PREFIX)).map((worker) => worker.pid)).toEqual([process.pid]);
      await until(
        () => readRunProgress(t.db, nightly.id),
        (progress) => progress.total - progress.pending >= 3,
        20_000,
      );

      // Every key of the service hashes to the prefix's slot: kill the master serving it, mid-run.
      const slot = Number(await cli(nodes[0]!.port, 'cluster', 'keyslot', config.QUEUE_PREFIX));
      const masterPort = await masterOfSlot(nodes[0]!.port, slot);
      const master = nodes.find((node) => node.port === masterPort)!;
      const masterId = (await cli(masterPort, 'cluster', 'myid')).trim();
      const replicaPort = Number(
        (await cli(masterPort, 'cluster', 'nodes'))
          .split('\n')
          .map((line) => line.split(' '))
          .find((fields) => fields[3] === masterId)![1]!
          .split(':')[1]!
          .split('@')[0],
      );
      // The replica takes over at once (CLUSTER FAILOVER TAKEOVER needs no vote), then the old master dies.
      await cli(replicaPort, 'cluster', 'failover', 'takeover');
      master.child.kill('SIGKILL');
      const promoted = await until(
        () => masterOfSlot(replicaPort, slot).catch(() => masterPort),
        (port) => port === replicaPort,
        20_000,
      );
      expect(promoted).toBe(replicaPort);
      const atFailover = await readRunProgress(t.db, nightly.id);

      // The reconciliation and the payout run, queued on the promoted master.
      await enqueueJob(payDates, reconcilePayDateJob, { payrollId: w.payroll.id, payDate: PD1 }, { jobId: `reconcile.cluster.${w.payroll.id}` });
      await until(
        () => t.db.selectFrom('reconciliation_runs').select('id').where('payroll_id', '=', w.payroll.id).execute(),
        (runs) => runs.length > 0,
        20_000,
      );
      await enqueueJob(maintenance, runPayoutsJob, { date: '2026-11-02' }, { jobId: 'run-payouts.cluster' });
      const payouts = await until(
        () => t.db.selectFrom('payouts').select(['biller_client_id', 'currency', 'status']).where('biller_client_id', '=', w.biller.clientId).execute(),
        (rows) => rows.length > 0,
        20_000,
      );

      await until(
        () => readRunProgress(t.db, nightly.id),
        (progress) => progress.finishedAt !== null,
        30_000,
      );
      expect(atFailover.pending).toBeGreaterThanOrEqual(0);
      const summary = await loadNightlySummary(t.db, nightly.id);
      expect(summary).toMatchObject({ pairs: PAYROLLS, payrollsLocked: PAYROLLS, pending: 0, paymentsInstructed: payments, failures: [] });
      // One snapshot per pay date, each payment instructed once with one event.
      expect(await snapshotCounts(t.db, payrollIds)).toEqual(Array(PAYROLLS).fill(1));
      const { payments: rows, eventsPerPayment } = await paymentsAndEvents(t.db, payrollIds);
      expect(rows.every((p) => p.status === 'instructed' && p.attempts === 1)).toBe(true);
      expect([...eventsPerPayment.values()]).toEqual(Array(payments).fill(1));
      const files = await t.db
        .selectFrom('instruction_files')
        .select(['payroll_id', 'pay_date'])
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('payroll_id', 'in', payrollIds)
        .groupBy(['payroll_id', 'pay_date'])
        .execute();
      expect(files.map((file) => Number(file.count))).toEqual(Array(PAYROLLS).fill(1));

      // The reconciliation collected all three and the payout run paid them out: one payout for the biller, currency and date.
      const collected = await t.db.selectFrom('payment_requests').select('status').where('payroll_id', '=', w.payroll.id).execute();
      expect(collected.map((p) => p.status)).toEqual(['paid_out', 'paid_out', 'paid_out']);
      expect(payouts).toHaveLength(1);
      expect(payouts[0]).toMatchObject({ biller_client_id: w.biller.clientId, currency: 'GBP' });

      // Every event of the run reaches the receiver; the database records one successful delivery
      // each, and the receiver's duplicates, if any, carry a webhook-id it already had (at least once).
      const eventIds = new Set((await t.db.selectFrom('events').select('id').where('biller_client_id', '=', biller.clientId).execute()).map((e) => e.id));
      expect(eventIds.size).toBe(payments);
      await hooks.waitFor((receiver) => new Set(receiver.deliveries.filter((d) => d.verified).map((d) => d.webhookId)).size >= payments, 30_000);
      const delivered = hooks.deliveries.filter((d) => d.verified).map((d) => d.webhookId);
      expect([...eventIds].every((id) => delivered.includes(id))).toBe(true);
      expect(delivered.every((id) => id !== undefined && eventIds.has(id))).toBe(true);
      // The row is marked after the receiver answered: wait for the last marks.
      const deliveries = await until(
        () =>
          t.db
            .selectFrom('webhook_deliveries')
            .select(['event_id', 'status'])
            .where('event_id', 'in', [...eventIds])
            .execute(),
        (rows) => rows.every((d) => d.status === 'succeeded'),
        10_000,
      );
      expect(deliveries).toHaveLength(payments);
      if (process.env.PRINT_TIMINGS) {
        process.stderr.write(
          `redis cluster: master ${masterPort} killed with ${atFailover.pending} of ${atFailover.total} pay dates pending; ` +
            `${delivered.length - payments} duplicate webhook deliveries\n`,
        );
      }
    } finally {
      await Promise.all([payDates.close(), maintenance.close()]);
    }
  }, 90_000);
});
