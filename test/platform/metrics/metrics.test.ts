import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { attentionKinds } from '../../../src/faces/attention/attention.ts';
import pino from 'pino';
import { composition } from '../../../bin/composition.ts';
import { startMetricsServer, type MetricsServer } from '../../../src/platform/metrics/metrics-server.ts';
import { renderMetrics, scrapeRegistry } from '../../../src/platform/metrics/service-metrics.ts';
import { dispatchEventsJob, queueNames, type QueueName } from '../../../src/platform/queue/job-catalogue.ts';
import { insertRunWithDuePayDates } from '../../../src/cycle/nightly/nightly-run-repository.ts';
import { createQueue } from '../../../src/platform/queue/queues.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import type { WorkerHost } from '../../../src/faces/workers/worker-host.ts';
import { createBiller } from '../../support/factories.ts';
import { authHeaders, startTestApp, type TestApp } from '../../support/test-app.ts';
import { until } from '../../faces/webhooks/webhook-test-kit.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

/** The Prometheus text format (0.0.4): HELP and TYPE lines, then samples whose names extend the family's. */
function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (name: string) => {
    let family = families.get(name);
    if (!family) families.set(name, (family = { name, type: 'untyped', help: '', samples: [] }));
    return family;
  };
  const suffixes = ['_bucket', '_sum', '_count', '_total', ''];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (meta) {
      const family = familyOf(meta[2]!);
      if (meta[1] === 'TYPE') family.type = meta[3]!;
      else family.help = meta[3]!;
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!sample) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;
    const labelText = sample[2] ?? '';
    let match: RegExpExecArray | null;
    let consumed = 0;
    while ((match = labelPattern.exec(labelText))) {
      labels[match[1]!] = match[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      consumed = labelPattern.lastIndex;
    }
    if (consumed !== labelText.length) throw new Error(`malformed labels: ${line}`);
    const name = sample[1]!;
    const owner = suffixes.map((suffix) => (suffix && name.endsWith(suffix) ? name.slice(0, -suffix.length) : name)).find((base) => families.has(base)) ?? name;
    familyOf(owner).samples.push({ name, labels, value: Number(sample[3]) });
  }
  return families;
}

/** A sample's value by its name and (some of) its labels; 0 when the series does not exist yet. */
function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string>): number {
  const samples = [...families.values()].flatMap((family) => family.samples);
  const found = samples.find((s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value));
  return found?.value ?? 0;
}

const METRICS_TOKEN = 'metrics-token-for-tests-0123456789';
const bearer = { authorization: `Bearer ${METRICS_TOKEN}` };

let t: TestApp;
let closed: TestApp | undefined;
let host: WorkerHost | undefined;
let server: MetricsServer | undefined;

beforeAll(async () => {
  t = await startTestApp({ env: { METRICS_TOKEN } });
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  await server?.close();
  server = undefined;
  await closed?.close();
  closed = undefined;
});
afterAll(async () => t?.close());

async function scrape(): Promise<Map<string, Family>> {
  const response = await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer });
  expect(response.statusCode).toBe(200);
  expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(response.body);
}

describe('/metrics on the API port', () => {
  it('answers 404, like a path with no route, when no METRICS_TOKEN is configured', async () => {
    closed = await startTestApp();
    const metrics = await closed.app.inject({ method: 'GET', url: '/metrics' });
    const nothing = await closed.app.inject({ method: 'GET', url: '/nothing-here' });
    expect(metrics.statusCode).toBe(404);
    expect(metrics.json()).toEqual({ ...nothing.json(), detail: 'No route for GET /metrics', instance: '/metrics' });
  });

  it('requires the configured token as a bearer token', async () => {
    const without = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(without.statusCode).toBe(401);
    expect(without.headers['www-authenticate']).toBe('Bearer');
    const wrong = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.statusCode).toBe(401);
    const basic = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Basic ${METRICS_TOKEN}` } });
    expect(basic.statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/metrics', headers: bearer })).statusCode).toBe(200);
  });

  it('follows Prometheus naming: counters end in _total, durations and timestamps are in seconds, every family has help', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const families = await scrape();
    const ours = [...families.values()].filter((family) => family.name.startsWith('deductions_'));
    expect(ours.length).toBeGreaterThan(0);
    for (const family of ours) {
      expect(family.name, family.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(family.help, family.name).not.toBe('');
      if (family.type === 'counter') expect(family.name).toMatch(/_total$/);
      else expect(family.name).not.toMatch(/_total$/);
      if (/duration|timestamp|_time_|latency|lag/.test(family.name)) expect(family.name).toMatch(/_seconds(_total)?$/);
      expect(family.name).not.toMatch(/_(ms|milliseconds|minutes|hours|kilobytes|megabytes)(_|$)/);
    }
    const typeOf = (name: string) => families.get(name)?.type;
    expect({
      http: typeOf('deductions_http_request_duration_seconds'),
      jobDuration: typeOf('deductions_job_duration_seconds'),
      jobAttempts: typeOf('deductions_job_attempts_total'),
      replays: typeOf('deductions_idempotency_replays_total'),
      queueJobs: typeOf('deductions_queue_jobs'),
      nightlyTimestamp: typeOf('deductions_nightly_last_success_timestamp_seconds'),
      nightlyDuration: typeOf('deductions_nightly_last_success_duration_seconds'),
      webhooks: typeOf('deductions_webhook_deliveries'),
      exceptions: typeOf('deductions_reconciliation_exceptions'),
      attentionItems: typeOf('deductions_attention_items'),
      attentionAge: typeOf('deductions_attention_oldest_age_seconds'),
      workersAlive: typeOf('deductions_workers_alive'),
      sourceUp: typeOf('deductions_metrics_source_up'),
    }).toEqual({
      http: 'histogram',
      jobDuration: 'histogram',
      jobAttempts: 'counter',
      replays: 'counter',
      queueJobs: 'gauge',
      nightlyTimestamp: 'gauge',
      nightlyDuration: 'gauge',
      webhooks: 'gauge',
      exceptions: 'gauge',
      attentionItems: 'gauge',
      attentionAge: 'gauge',
      workersAlive: 'gauge',
      sourceUp: 'gauge',
    });
  });

  it('counts a request in the duration histogram of its method, route and status', async () => {
    const labels = { method: 'GET', route: '/healthz', status_code: '200' };
    const before = sampleValue(await scrape(), 'deductions_http_request_duration_seconds_count', labels);
    await t.app.inject({ method: 'GET', url: '/healthz' });
    await t.app.inject({ method: 'GET', url: '/healthz' });
    const after = await scrape();
    expect(sampleValue(after, 'deductions_http_request_duration_seconds_count', labels)).toBe(before + 2);
    expect(sampleValue(after, 'deductions_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 2);
  });

  it('labels requests by route pattern, never by the URL, and every unmatched URL as one value', async () => {
    const biller = await createBiller(t.db);
    const paymentId = randomUUID();
    const strayId = randomUUID();
    // The process keeps its counts for its life (other test files in this worker add to them).
    const cancelLabels = { method: 'POST', route: '/payments/:payment_id/cancel', status_code: '404' };
    const cancelsBefore = sampleValue(await scrape(), 'deductions_http_request_duration_seconds_count', cancelLabels);
    const cancel = await t.app.inject({ method: 'POST', url: `/payments/${paymentId}/cancel`, headers: await authHeaders(t.app, biller) });
    expect(cancel.statusCode).toBe(404);
    expect((await t.app.inject({ method: 'GET', url: `/no-such-thing/${strayId}` })).statusCode).toBe(404);

    const families = await scrape();
    const routes = families.get('deductions_http_request_duration_seconds')!.samples.map((sample) => sample.labels.route);
    expect(routes).toContain('/payments/:payment_id/cancel');
    expect(routes).toContain('unmatched');
    const everyLabelValue = [...families.values()].flatMap((family) => family.samples.flatMap((sample) => Object.values(sample.labels)));
    expect(everyLabelValue.filter((value) => value.includes(paymentId) || value.includes(strayId))).toEqual([]);
    expect(sampleValue(families, 'deductions_http_request_duration_seconds_count', cancelLabels)).toBe(cancelsBefore + 1);
  });

  it('counts a request answered by replaying an earlier one with the same Idempotency-Key', async () => {
    const biller = await createBiller(t.db);
    const request = { method: 'POST' as const, url: `/payments/${randomUUID()}/cancel`, headers: { ...(await authHeaders(t.app, biller)), 'idempotency-key': randomUUID() } };
    const before = sampleValue(await scrape(), 'deductions_idempotency_replays_total', {});
    await t.app.inject(request);
    expect(sampleValue(await scrape(), 'deductions_idempotency_replays_total', {})).toBe(before);
    const replay = await t.app.inject(request);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(sampleValue(await scrape(), 'deductions_idempotency_replays_total', {})).toBe(before + 1);
  });

  it('reads queue depths, the nightly run, webhook deliveries and reconciliation exceptions on scrape', async () => {
    const families = await scrape();
    for (const queue of Object.values(queueNames)) {
      for (const state of ['waiting', 'active', 'delayed', 'failed']) {
        expect(families.get('deductions_queue_jobs')!.samples, `${queue} ${state}`).toContainEqual({ name: 'deductions_queue_jobs', labels: { queue, state }, value: 0 });
      }
    }
    expect(
      families
        .get('deductions_webhook_deliveries')!
        .samples.map((sample) => sample.labels.status)
        .sort(),
    ).toEqual(['abandoned', 'failed', 'pending']);
    expect(families.get('deductions_reconciliation_exceptions')!.samples).toHaveLength(3);
    // No nightly run has finished in this database yet.
    expect(sampleValue(families, 'deductions_nightly_last_success_timestamp_seconds', {})).toBe(0);
    expect(Object.fromEntries(families.get('deductions_metrics_source_up')!.samples.map((sample) => [sample.labels.source, sample.value]))).toEqual({
      redis: 1,
      postgres_nightly_runs: 1,
      postgres_webhook_deliveries: 1,
      postgres_reconciliation_exceptions: 1,
      attention: 1,
    });
    // The attention list's counts: every kind, none waiting in this database but the dead worker (none runs here).
    const attention = Object.fromEntries(families.get('deductions_attention_items')!.samples.map((sample) => [sample.labels.kind, sample.value]));
    expect(Object.keys(attention).sort()).toEqual([...attentionKinds].sort());
    expect(attention).toMatchObject({ worker_not_alive: 1, credit_unmatched: 0 });
    expect(sampleValue(families, 'deductions_workers_alive', {})).toBe(0);
  });
});

describe('scrape-time figures', () => {
  it('give the last nightly run without a failed pay date: when it finished and how long it took', async () => {
    // Nothing is due in this database, so the run is finished as it starts.
    const run = await t.db
      .transaction()
      .execute((trx) => insertRunWithDuePayDates(trx, { id: randomUUID(), runDate: '2026-11-12', trigger: 'manual', triggeredBy: 'metrics test' }));
    const families = await scrape();
    expect(sampleValue(families, 'deductions_nightly_last_success_timestamp_seconds', {})).toBe(new Date(run.finished_at!).getTime() / 1000);
    expect(sampleValue(families, 'deductions_nightly_last_success_duration_seconds', {})).toBe(
      (new Date(run.finished_at!).getTime() - new Date(run.started_at).getTime()) / 1000,
    );
  });

  it('answer without the queue depths, and say Redis is down, when Redis accepts the connection but never replies', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const unanswered = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
    unanswered.on('error', () => {});
    const queues = Object.fromEntries(Object.values(queueNames).map((name) => [name, new Queue(name, { connection: unanswered, prefix: t.config.QUEUE_PREFIX })])) as Record<
      QueueName,
      Queue
    >;
    try {
      const registry = scrapeRegistry({ db: t.db, queues: () => queues }, 200);
      const families = parsePrometheusText((await renderMetrics(registry)).body);
      expect(families.get('deductions_queue_jobs')!.samples).toEqual([]);
      expect(sampleValue(families, 'deductions_metrics_source_up', { source: 'redis' })).toBe(0);
      expect(sampleValue(families, 'deductions_metrics_source_up', { source: 'postgres_reconciliation_exceptions' })).toBe(1);
    } finally {
      unanswered.disconnect();
      silent.close();
    }
  });
});

describe('job metrics and the metrics port', () => {
  it('count a job the worker host runs, served on a port of their own that takes the token too', async () => {
    const runtime = { config: t.config, db: t.db, redis: t.redis, logger: pino({ level: 'silent' }), close: async () => {} };
    host = await composition.startWorkers(runtime, { schedule: false });
    const workerHost = host;
    server = await startMetricsServer({
      host: '127.0.0.1',
      port: 0,
      token: METRICS_TOKEN,
      scrape: scrapeRegistry({ db: t.db, queues: () => workerHost.queues }),
    });
    const url = `http://127.0.0.1:${server.port}/metrics`;
    const scrapePort = async () => {
      const response = await fetch(url, { headers: bearer });
      expect(response.status).toBe(200);
      return parsePrometheusText(await response.text());
    };
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${server.port}/elsewhere`, { headers: bearer })).status).toBe(404);

    const labels = { queue: queueNames.webhookDispatch, job: dispatchEventsJob };
    const before = await scrapePort();
    const completedBefore = sampleValue(before, 'deductions_job_attempts_total', { ...labels, outcome: 'completed' });
    const timedBefore = sampleValue(before, 'deductions_job_duration_seconds_count', labels);

    const queue = createQueue(queueNames.webhookDispatch, producerConnection(t.config.REDIS_URL), t.config.QUEUE_PREFIX);
    try {
      await queue.add(dispatchEventsJob, {});
    } finally {
      await queue.close();
    }

    const after = await until(scrapePort, (families) => sampleValue(families, 'deductions_job_attempts_total', { ...labels, outcome: 'completed' }) > completedBefore);
    expect(sampleValue(after, 'deductions_job_attempts_total', { ...labels, outcome: 'completed' })).toBe(completedBefore + 1);
    expect(sampleValue(after, 'deductions_job_duration_seconds_count', labels)).toBe(timedBefore + 1);
    expect(after.get('deductions_job_attempts_total')?.type).toBe('counter');
  });
});
