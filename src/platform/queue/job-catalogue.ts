import type { DefaultJobOptions, JobsOptions, RepeatOptions } from 'bullmq';
import { z } from 'zod';
import { NIGHTLY_CRON_DEFAULT, type Config } from '../config/config.ts';
import { isoDateSchema, uuidSchema } from '../shared/schemas.ts';

/**
 * The job catalogue: every queue, job name, job id, schedule and retry policy, in the order a
 * pay-date cycle runs them. Redis keeps these values (queue keys, job ids, job schedulers,
 * deduplication ids), so a deployed one never changes: a renamed job or id strands what Redis holds.
 * jobs/index.ts registers a processor for every job name here. Each job's payload has one zod schema
 * here too (`jobPayloadSchemas`): producers add jobs through enqueueJob (job-contract.ts), which checks the
 * payload against it, and processors read theirs with payloadOf, which fails a malformed job for good.
 * Redis keeps payloads as well, so a schema accepts every payload ever queued: a field added later is
 * optional (or has a default) for the jobs already waiting.
 *
 * The nightly walk (times in the service time zone); each step is a numbered section below:
 *
 *  1. nightly-trigger (queue nightly, 01:00 or NIGHTLY_CRON): syncs provider calendars, starts the
 *     run of the date (a database row per due pay date) and queues a lock job per pay date.
 *  2. lock-pay-date (pay-dates, one per run and pay date): locks the pay date's snapshot with its
 *     instruction file, then pushes the changed items to a provider with an API.
 *  3. rerun-pay-date (pay-dates, on an operator's request): a new snapshot version and instruction
 *     file, pushed the same way, then a reconciliation request.
 *  4. reconcile-pay-date (pay-dates): debounced, 5 s after the last accepted deduction record or
 *     re-run; reconcile-sweep (nightly, 05:00) queues one for every pay date due, final once its
 *     settlement window is over.
 *  5. run-payouts (maintenance, 06:00): pays billers what has settled.
 *  6. dispatch-events (webhook-dispatch, every 2 s): outbox events into webhook deliveries, which
 *     wait in the database and are admitted a few per biller at a time; deliver-webhook
 *     (webhook-deliveries): one job per admission, one attempt each, retried for about three days.
 *  7. purge-idempotency-keys (maintenance, 03:30): housekeeping.
 *
 * The database, not Redis, is the source of truth: the watchdog (src/faces/workers/watchdog.ts) puts back the
 * schedulers and jobs Redis lost, and every job is safe to run twice.
 */

// ---- Queues, and the policy a job has unless its section says otherwise ----

export const queueNames = {
  /** Daily housekeeping: idempotency key purge, payouts. */
  maintenance: 'maintenance',
  /** The nightly trigger and the reconciliation sweep. */
  nightly: 'nightly',
  /** One job per (run, payroll, pay date): lock, then instruct; re-runs and reconciliations. */
  payDates: 'pay-dates',
  /** The outbox dispatcher (every 2 s): events into webhook deliveries. */
  webhookDispatch: 'webhook-dispatch',
  /** One job per webhook delivery, retried on the webhook schedule. */
  webhookDeliveries: 'webhook-deliveries',
} as const;

export type QueueName = (typeof queueNames)[keyof typeof queueNames];

/** Bounded history: enough to inspect recent failures without letting Redis grow forever. */
export const defaultJobOptions: DefaultJobOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 5_000 },
  removeOnComplete: { count: 1_000, age: 7 * 86_400 },
  removeOnFail: { count: 5_000, age: 30 * 86_400 },
};

/**
 * How long a job's lock (BullMQ's, in Redis) lives between renewals; the worker renews it every half of this while the
 * job runs, whatever the job's length. Pay-date jobs take milliseconds to about a second (the
 * nightly benchmark: 10,000 locks in 87-138 s at 6 at a time), webhook deliveries up to their 15 s
 * timeout; all of them renew. 15 s leaves 7.5 s for a renewal delayed by a busy event loop, and
 * bounds how long a dead worker's job waits.
 */
export const JOB_LOCK_DURATION_MS = 15_000;
/**
 * How often the workers of a queue look for active jobs whose job lock has expired (one check per
 * interval across all of them): each check moves jobs the previous one saw active and that have
 * lost their lock, so a dead worker's job is back in the queue at most lock duration + one
 * interval after the last renewal, 20 s, when another worker is running.
 */
export const STALLED_INTERVAL_MS = 5_000;
/**
 * A job whose worker died more than this often is failed rather than retried again: two crashes
 * are a deploy and bad luck, a third is the job itself (a payroll too big for the process). Every
 * job is safe to repeat, so a recovery never does anything twice.
 */
export const MAX_STALLED_COUNT = 2;

/** What the service promises: a dead worker's job is back in the queue within this. */
export const STALLED_RECOVERY_PROMISE_MS = 30_000;

/**
 * The longest a job waits, after its worker's last job lock renewal, before a running worker hands it to
 * the queue again. The lock runs out `lockDurationMs` after that renewal, and the first stalled check
 * after that moves the job (each check marks the active jobs; the next one moves those still without
 * a lock, and by then this one was marked, since checks come faster than locks run out). Checks come
 * an interval apart, but once may come two apart: a worker skips its check while another worker's
 * last check is less than an interval old, and when that other worker is the one that died, the next
 * check is the survivor's following one.
 */
export function stalledRecoveryBoundMs(lockDurationMs = JOB_LOCK_DURATION_MS, stalledIntervalMs = STALLED_INTERVAL_MS): number {
  return lockDurationMs + 2 * stalledIntervalMs;
}

// BullMQ job ids may not contain ':' (its key separator), hence the dots in every id below.

// ---- 1. Nightly trigger (queue nightly) ----

/** A payroll's pay date: what every pay-date job is about. */
export interface PayDatePair {
  payrollId: string;
  payDate: string;
}

export const nightlyTriggerJob = 'nightly-trigger';
/**
 * Fired by the job scheduler with no data (today's run), or by the watchdog for a run date whose
 * trigger never ran (`runDate`, trigger `catch_up`).
 */
const nightlyTriggerPayload = z.object({ runDate: isoDateSchema.optional(), trigger: z.enum(['schedule', 'catch_up']).default('schedule') });
/** When the nightly run starts unless NIGHTLY_CRON says otherwise: 01:00 (configuration's default). */
export { NIGHTLY_CRON_DEFAULT };
/** The watchdog's trigger for a run date whose scheduled trigger never ran. */
export const catchUpTriggerJobId = (runDate: string) => `nightly-trigger.catch-up.${runDate}`;

// ---- 2. The lock of each due pay date, its instruction file and provider push (queue pay-dates) ----

/** The lock job; its name (and its ids' `lock.` prefix) predates the word and stays, as Redis keeps them. */
export const lockPayDateJob = 'lock-pay-date';
/**
 * `runId` names the nightly run (a database row) that the pay date's outcome is recorded against; a
 * job without one (queued before runs were recorded) only locks.
 */
const lockPayDatePayload = z.object({ runId: uuidSchema.optional(), payrollId: uuidSchema, payDate: isoDateSchema });
/**
 * One id per run and pay date: a run is a database row with a generated id, so a job of another
 * database state (a restored backup, a recreated database) can never stand in for this one. A
 * job the watchdog queues again, because Redis no longer holds a live one, gets the next suffix.
 */
export const lockJobId = (runId: string, pair: PayDatePair, requeues = 0) => `lock.${runId}.${pair.payrollId}.${pair.payDate}${requeues > 0 ? `.r${requeues}` : ''}`;

// ---- 3. Re-runs (queue pay-dates) ----

export const rerunPayDateJob = 'rerun-pay-date';
/** The re-run's row says which pay date and holds every request that joined it. */
const rerunPayDatePayload = z.object({ rerunId: uuidSchema });
/** Every request that joins an open re-run adds the same job. */
export const rerunJobId = (rerunId: string) => `rerun.${rerunId}`;

// ---- 4. Reconciliation: debounced requests (queue pay-dates) and the daily sweep (queue nightly) ----

export const reconcilePayDateJob = 'reconcile-pay-date';
/**
 * `final` is set only by the nightly sweep, once the pay date's settlement window is over; the
 * debounced request after accepted records never sets it.
 */
const reconcilePayDatePayload = z.object({ payrollId: uuidSchema, payDate: isoDateSchema, final: z.boolean().default(false) });

/** Quiet period after the last accepted record before reconciling (pushes arrive in bursts). */
export const RECONCILIATION_DEBOUNCE_MS = 5_000;

/**
 * BullMQ debouncing: one deduplication id per payroll pay date; each new request while the job
 * waits pushes it back (extend + replace), and a request while it runs queues exactly one more
 * (keepLastIfActive), so records that arrive mid-reconciliation are never missed.
 */
export function debouncedReconcileJobOptions(payrollId: string, payDate: string, debounceMs: number): JobsOptions {
  return {
    ...defaultJobOptions,
    delay: debounceMs,
    deduplication: { id: `reconcile.${payrollId}.${payDate}`, ttl: debounceMs, extend: true, replace: true, keepLastIfActive: true },
  };
}

export const reconcileSweepJob = 'reconcile-sweep';
/** From its scheduler with no data (today); `runDate` sweeps as of another date. */
const reconcileSweepPayload = z.object({ runDate: isoDateSchema.optional() });
/** Daily, after the nightly lock run (01:00 by default), in the service time zone. */
export const RECONCILE_SWEEP_CRON = '0 5 * * *';
/** One id per pay date and run date: a sweep run twice on the same day adds each reconciliation once. */
export const sweepReconcileJobId = (runDate: string, payrollId: string, payDate: string) => `reconcile-sweep.${runDate}.${payrollId}.${payDate}`;

// ---- 5. Payouts (queue maintenance) ----

export const runPayoutsJob = 'run-payouts';
/** From its scheduler with no data (today); `date` pays out as of another date. */
const runPayoutsPayload = z.object({ date: isoDateSchema.optional() });
/** Daily, early enough for finance to send the bank file the same morning (service time zone). */
export const RUN_PAYOUTS_CRON = '0 6 * * *';

// ---- 6. Webhooks: the outbox dispatcher (queue webhook-dispatch) and one delivery per job (queue webhook-deliveries) ----

export const SECOND = 1_000;
const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** Waits after the 1st, 2nd, ... failed attempt: about three days in all. */
export const RETRY_SCHEDULE_MS: readonly number[] = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR];

/** The first attempt plus one retry per step of the schedule. */
export const DELIVERY_ATTEMPTS = RETRY_SCHEDULE_MS.length + 1;

export const dispatchEventsJob = 'dispatch-events';
/** The dispatcher works from the outbox: it carries nothing (and ignores what a job carries). */
const dispatchEventsPayload = z.object({}).passthrough();
/** How often the dispatcher looks at the outbox. */
export const DISPATCH_EVERY_MS = 2_000;
/** A run every 2 s would flood the history: completed runs are not kept, the last 100 failures are. */
export const dispatchEventsJobOptions = { removeOnComplete: true, removeOnFail: { count: 100 } } as const;
/** An extra dispatcher run asked for: bursts of asks collapse into one job (deduplicated by the job name). */
export const requestedDispatchJobOptions: JobsOptions = { deduplication: { id: dispatchEventsJob }, ...dispatchEventsJobOptions };

export const deliverWebhookJob = 'deliver-webhook';
/** The delivery's row holds the rest (event, endpoint, attempts). */
const deliverWebhookPayload = z.object({ deliveryId: uuidSchema });
/** The backoff type delivery jobs name; the delivery worker resolves it with `webhookBackoffStrategy`. */
export const WEBHOOK_BACKOFF_TYPE = 'webhook-schedule';
/**
 * The job of a delivery's n-th admission (webhook-admission.ts): a delivery waits in the database until
 * admitted, and each admission (its first attempt, each retry, each return after its endpoint's circuit
 * opened) is one job, whose id the delivery's row records, so a dispatcher admitting twice, or a
 * recovery queuing it again, still queues it once.
 */
export const admittedDeliveryJobId = (deliveryId: string, admission: number) => `delivery.${deliveryId}.${admission}`;
/** A delivery's one job, before admission: jobs of this id still queued take a place in their biller's share when they run. */
export const deliveryJobId = (deliveryId: string) => `delivery.${deliveryId}`;
/** A redelivery's id: its own, since the first delivery's job may still be kept (see enqueueDeliveries). */
export const redeliveryJobId = (deliveryId: string, stamp: number) => `redelivery.${deliveryId}.${stamp}`;

/**
 * A delivery job makes one attempt (a failed one is retried on the webhook schedule, about three days,
 * by a later admission); its own retries are for errors of ours (the database away mid-job), on the
 * same schedule. A longer history than other jobs.
 */
export function deliveryJobOptions(jobId: string): JobsOptions {
  return {
    jobId,
    attempts: DELIVERY_ATTEMPTS,
    backoff: { type: WEBHOOK_BACKOFF_TYPE },
    removeOnComplete: { count: 10_000, age: 7 * 86_400 },
    removeOnFail: { count: 10_000, age: 30 * 86_400 },
  };
}

// ---- 7. Housekeeping (queue maintenance) ----

export const purgeIdempotencyKeysJob = 'purge-idempotency-keys';
/** Housekeeping carries nothing (and ignores what a job carries). */
const purgeIdempotencyKeysPayload = z.object({}).passthrough();
export const PURGE_IDEMPOTENCY_KEYS_CRON = '30 3 * * *';

// ---- What runs on a clock, and which worker runs what ----

/** One BullMQ job scheduler: the queue it adds to, its id, when it repeats and the job it adds. */
export type RecurringSchedule = {
  [Name in JobName]: {
    queue: QueueOfJob<Name>;
    id: string;
    repeat: RepeatOptions;
    template: { name: Name; data: JobPayload<Name>; opts?: { removeOnComplete?: boolean; removeOnFail?: { count: number } } };
  };
}[JobName];

/** Everything the workers run on a clock, in the service time zone; each scheduler's id is its job's name. */
export function recurringSchedules(config: Pick<Config, 'NIGHTLY_CRON' | 'SERVICE_TIME_ZONE'>): RecurringSchedule[] {
  const tz = config.SERVICE_TIME_ZONE;
  return [
    {
      queue: queueNames.webhookDispatch,
      id: dispatchEventsJob,
      repeat: { every: DISPATCH_EVERY_MS },
      template: { name: dispatchEventsJob, data: {}, opts: dispatchEventsJobOptions },
    },
    {
      queue: queueNames.maintenance,
      id: purgeIdempotencyKeysJob,
      repeat: { pattern: PURGE_IDEMPOTENCY_KEYS_CRON, tz },
      template: { name: purgeIdempotencyKeysJob, data: {} },
    },
    { queue: queueNames.maintenance, id: runPayoutsJob, repeat: { pattern: RUN_PAYOUTS_CRON, tz }, template: { name: runPayoutsJob, data: {} } },
    { queue: queueNames.nightly, id: nightlyTriggerJob, repeat: { pattern: config.NIGHTLY_CRON, tz }, template: { name: nightlyTriggerJob, data: {} } },
    { queue: queueNames.nightly, id: reconcileSweepJob, repeat: { pattern: RECONCILE_SWEEP_CRON, tz }, template: { name: reconcileSweepJob, data: {} } },
  ];
}

/**
 * The jobs each queue's worker runs (jobs/index.ts has a processor for each) and how many at once;
 * the worker host's options may change the pay-date and delivery concurrency.
 */
export const queueWorkers = {
  [queueNames.maintenance]: { jobs: [purgeIdempotencyKeysJob, runPayoutsJob], concurrency: 1 },
  [queueNames.nightly]: { jobs: [nightlyTriggerJob, reconcileSweepJob], concurrency: 1 },
  // Postgres does the heavy lifting, so a few per core.
  [queueNames.payDates]: { jobs: [lockPayDateJob, rerunPayDateJob, reconcilePayDateJob], concurrency: 4 },
  [queueNames.webhookDispatch]: { jobs: [dispatchEventsJob], concurrency: 1 },
  // Mostly waiting on receivers' answers, so many at once.
  [queueNames.webhookDeliveries]: { jobs: [deliverWebhookJob], concurrency: 16 },
} as const satisfies Record<QueueName, { jobs: readonly string[]; concurrency: number }>;

export type JobNameOn<Queue extends QueueName> = (typeof queueWorkers)[Queue]['jobs'][number];

// ---- Payloads: one schema per job ----

/** Every job name of the catalogue. */
export type JobName = (typeof queueWorkers)[QueueName]['jobs'][number];

/** The queue a job goes on (the one whose worker runs it). */
export type QueueOfJob<Name extends JobName> = { [Queue in QueueName]: Name extends JobNameOn<Queue> ? Queue : never }[QueueName];

/** The queue of every job name, from queueWorkers. */
export const queueOfJob = Object.fromEntries(Object.entries(queueWorkers).flatMap(([queue, { jobs }]) => jobs.map((job) => [job, queue]))) as {
  readonly [Name in JobName]: QueueOfJob<Name>;
};

/**
 * The payload of every job, producer's and processor's alike. Unknown fields are dropped when a
 * processor reads a payload rather than refused, so what Redis holds from older producers still runs.
 */
export const jobPayloadSchemas = {
  [nightlyTriggerJob]: nightlyTriggerPayload,
  [lockPayDateJob]: lockPayDatePayload,
  [rerunPayDateJob]: rerunPayDatePayload,
  [reconcilePayDateJob]: reconcilePayDatePayload,
  [reconcileSweepJob]: reconcileSweepPayload,
  [runPayoutsJob]: runPayoutsPayload,
  [dispatchEventsJob]: dispatchEventsPayload,
  [deliverWebhookJob]: deliverWebhookPayload,
  [purgeIdempotencyKeysJob]: purgeIdempotencyKeysPayload,
} as const satisfies { [Name in JobName]: z.ZodType };

/** What a producer puts in a job of this name (fields with a default may be left out). */
export type JobPayload<Name extends JobName> = z.input<(typeof jobPayloadSchemas)[Name]>;
/** What the job's processor reads once its schema has parsed it (defaults filled in). */
export type ParsedJobPayload<Name extends JobName> = z.output<(typeof jobPayloadSchemas)[Name]>;
