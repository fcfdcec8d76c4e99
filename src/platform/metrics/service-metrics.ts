import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/connection.ts';
import type { RedisClient } from '../runtime/redis-connections.ts';
import { queueNames, type QueueName } from '../queue/job-catalogue.ts';
import { createQueue, type JobQueues } from '../queue/queues.ts';
import { countCurrentReconciliationExceptions, countUnfinishedWebhookDeliveries, findLastSuccessfulNightlyRun } from './metrics-repository.ts';
import { answeredWithin } from '../shared/answered-within.ts';

/**
 * What one process measures as it works (requests, jobs, replays), kept for the life of the process
 * as Prometheus expects of counters and histograms. What the database and Redis know (queue depths,
 * the last nightly run, backlogs) is read on scrape instead: see scrapeRegistry.
 */
export const processRegistry = new Registry();
// Node's standard process and runtime metrics, under their usual names (process_*, nodejs_*).
collectDefaultMetrics({ register: processRegistry });

/** A request that matched no route: one label value, whatever URL was asked for. */
export const UNMATCHED_ROUTE = 'unmatched';

const httpRequestDuration = new Histogram({
  name: 'deductions_http_request_duration_seconds',
  help: 'HTTP requests by method, route pattern and status code, from arrival to the last byte of the response.',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [processRegistry],
});

const jobDuration = new Histogram({
  name: 'deductions_job_duration_seconds',
  help: 'Job attempts by queue and job name, from start to completion or failure.',
  labelNames: ['queue', 'job'] as const,
  buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900],
  registers: [processRegistry],
});

const jobAttempts = new Counter({
  name: 'deductions_job_attempts_total',
  help: 'Job attempts by queue, job name and outcome (completed or failed; a failed attempt may be retried).',
  labelNames: ['queue', 'job', 'outcome'] as const,
  registers: [processRegistry],
});

const idempotencyReplays = new Counter({
  name: 'deductions_idempotency_replays_total',
  help: 'Requests answered with the stored response of an earlier request with the same Idempotency-Key.',
  registers: [processRegistry],
});

/** HTTP methods are a closed set; anything else Node let through is one label value. */
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function observeHttpRequest(method: string, routePattern: string | undefined, statusCode: number, seconds: number): void {
  httpRequestDuration.observe(
    {
      method: knownMethods.has(method) ? method : 'other',
      route: routePattern ?? UNMATCHED_ROUTE,
      status_code: statusCode >= 100 && statusCode <= 599 ? String(statusCode) : 'other',
    },
    seconds,
  );
}

export function observeJobAttempt(queue: QueueName, job: string, outcome: 'completed' | 'failed', seconds: number): void {
  jobDuration.observe({ queue, job }, seconds);
  jobAttempts.inc({ queue, job, outcome });
}

export function countIdempotencyReplay(): void {
  idempotencyReplays.inc();
}

/** What needs an operator, per kind (src/faces/attention): how many, and the oldest one's age. */
export interface AttentionGauges {
  items: Record<string, number>;
  oldestAgeSeconds: Record<string, number>;
  /** Worker processes alive; null when the source did not ask. */
  workersAlive: number | null;
}

/** Where scrape-time figures come from; queues are optional (a process without them shows no depths). */
export interface ScrapeSources {
  db: Database;
  queues?: () => JobQueues;
  /** The attention list's counts, which the alert rules page on; read by the face that has every source. */
  attention?: () => Promise<AttentionGauges>;
}

/** Queues to read depths from, on a connection the caller owns, opened on the first scrape. */
export function queuesOnFirstScrape(redis: RedisClient, prefix: string): { queues: () => JobQueues; close(): Promise<void> } {
  let queues: JobQueues | undefined;
  return {
    queues: () => (queues ??= Object.fromEntries(Object.values(queueNames).map((name) => [name, createQueue(name, redis, prefix)])) as JobQueues),
    close: async () => {
      if (queues) await Promise.all(Object.values(queues).map((queue) => queue.close()));
    },
  };
}

/** A scrape answers in this time even when Redis or PostgreSQL hangs; the late source is reported down. */
export const SCRAPE_SOURCE_TIMEOUT_MS = 1_000;

const queueStates = ['waiting', 'active', 'delayed', 'failed'] as const;

/**
 * The figures read on each scrape, in a registry of their own so every exposure (the API, a metrics
 * port) reads its own sources. Each source has SCRAPE_SOURCE_TIMEOUT_MS; one that fails or is late
 * leaves its series out and sets deductions_metrics_source_up to 0 rather than failing the scrape.
 */
export function scrapeRegistry(sources: ScrapeSources, timeoutMs = SCRAPE_SOURCE_TIMEOUT_MS): Registry {
  const registry = new Registry();
  const registers = [registry];
  // Collectors start in registration order, each up to its first await: the readings below start
  // before the source-up gauge (registered last) waits for them, so it reports this scrape's.
  const readings = new Map<string, Promise<boolean>>();
  const read = <T>(source: string, work: () => Promise<T>, apply: (value: T) => void): Promise<boolean> => {
    const reading = answeredWithin(work(), timeoutMs).then(
      (value) => {
        apply(value);
        return true;
      },
      () => false,
    );
    readings.set(source, reading);
    return reading;
  };

  const queueQueues = sources.queues;
  if (queueQueues) {
    new Gauge({
      name: 'deductions_queue_jobs',
      help: 'Jobs in each queue by state (waiting, active, delayed, failed), read from Redis on scrape.',
      labelNames: ['queue', 'state'] as const,
      registers,
      async collect() {
        this.reset();
        const queues = queueQueues();
        await read(
          'redis',
          () => Promise.all(Object.values(queueNames).map(async (name) => [name, await queues[name].getJobCounts(...queueStates)] as const)),
          (counts) => {
            for (const [queue, byState] of counts) for (const state of queueStates) this.set({ queue, state }, byState[state] ?? 0);
          },
        );
      },
    });
  }

  const lastRunDuration = new Gauge({
    name: 'deductions_nightly_last_success_duration_seconds',
    help: 'How long the last nightly run without a failed pay date took; 0 while none has.',
    registers,
  });
  new Gauge({
    name: 'deductions_nightly_last_success_timestamp_seconds',
    help: 'When the last nightly run without a failed pay date finished, in seconds since the Unix epoch; 0 while none has.',
    registers,
    async collect() {
      this.reset();
      lastRunDuration.reset();
      await read(
        'postgres_nightly_runs',
        () => findLastSuccessfulNightlyRun(sources.db),
        (run) => {
          if (!run) return;
          this.set(run.finishedAt.getTime() / 1000);
          lastRunDuration.set(run.durationSeconds);
        },
      );
    },
  });

  new Gauge({
    name: 'deductions_webhook_deliveries',
    help: 'Webhook deliveries not delivered, by status: pending (the backlog, retries included), failed, abandoned.',
    labelNames: ['status'] as const,
    registers,
    async collect() {
      this.reset();
      await read(
        'postgres_webhook_deliveries',
        () => countUnfinishedWebhookDeliveries(sources.db),
        (counts) => {
          for (const [status, count] of Object.entries(counts)) this.set({ status }, count);
        },
      );
    },
  });

  new Gauge({
    name: 'deductions_reconciliation_exceptions',
    help: 'Current reconciliation exceptions (not superseded by a later reconciliation), by kind.',
    labelNames: ['kind'] as const,
    registers,
    async collect() {
      this.reset();
      await read(
        'postgres_reconciliation_exceptions',
        () => countCurrentReconciliationExceptions(sources.db),
        (counts) => {
          for (const [kind, count] of Object.entries(counts)) this.set({ kind }, count);
        },
      );
    },
  });

  const attentionSource = sources.attention;
  if (attentionSource) {
    // One read a scrape: the first gauge starts it (collectors start in registration order), the
    // others wait for the same reading.
    let latest: AttentionGauges | undefined;
    // A function, not the variable: the callback below sets it, which narrowing cannot see.
    const current = (): AttentionGauges | undefined => latest;
    let reading: Promise<boolean> = Promise.resolve(false);
    new Gauge({
      name: 'deductions_attention_items',
      help: "Items that need an operator, by kind (the console overview's attention list and deductions status); every kind is present, 0 when none.",
      labelNames: ['kind'] as const,
      registers,
      async collect() {
        this.reset();
        latest = undefined;
        reading = read('attention', attentionSource, (gauges) => {
          latest = gauges;
        });
        await reading;
        for (const [kind, count] of Object.entries(current()?.items ?? {})) this.set({ kind }, count);
      },
    });
    new Gauge({
      name: 'deductions_attention_oldest_age_seconds',
      help: 'Age in seconds of the oldest item of each kind that needs attention; 0 when there is none.',
      labelNames: ['kind'] as const,
      registers,
      async collect() {
        this.reset();
        await reading;
        for (const [kind, age] of Object.entries(current()?.oldestAgeSeconds ?? {})) this.set({ kind }, age);
      },
    });
    new Gauge({
      name: 'deductions_workers_alive',
      help: 'Worker processes with a live heartbeat in Redis; 0 means no job is being worked (or Redis did not answer).',
      registers,
      async collect() {
        this.reset();
        await reading;
        this.set(current()?.workersAlive ?? 0);
      },
    });
  }

  new Gauge({
    name: 'deductions_metrics_source_up',
    help: 'Whether a source of scrape-time metrics answered this scrape in time (1) or not (0).',
    labelNames: ['source'] as const,
    registers,
    async collect() {
      this.reset();
      const current = [...readings];
      readings.clear();
      for (const [source, reading] of current) this.set({ source }, (await reading) ? 1 : 0);
    },
  });

  return registry;
}

/** The text a scrape answers: the process's own metrics, then the scrape-time ones. */
export async function renderMetrics(scrape: Registry): Promise<{ contentType: string; body: string }> {
  const merged = Registry.merge([processRegistry, scrape]);
  return { contentType: processRegistry.contentType, body: await merged.metrics() };
}
