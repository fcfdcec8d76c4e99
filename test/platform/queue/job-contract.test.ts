import { describe, expect, it } from 'vitest';
import { enqueueLockJobs } from '../../../src/cycle/nightly/nightly-service.ts';
import { enqueueAdmitted, enqueueDeliveries, requestEventDispatch } from '../../../src/faces/webhooks/webhook-jobs.ts';
import {
  debouncedReconcileJobOptions,
  deliverWebhookJob,
  dispatchEventsJob,
  jobPayloadSchemas,
  lockPayDateJob,
  nightlyTriggerJob,
  purgeIdempotencyKeysJob,
  queueNames,
  queueOfJob,
  queueWorkers,
  reconcilePayDateJob,
  reconcileSweepJob,
  recurringSchedules,
  rerunPayDateJob,
  runPayoutsJob,
  type JobName,
  type QueueName,
} from '../../../src/platform/queue/job-catalogue.ts';
import { checkJobPayload, enqueueJob, enqueueJobs, payloadOf, payloadOrUndefined } from '../../../src/platform/queue/job-contract.ts';
import type { JobQueue, JobQueues } from '../../../src/platform/queue/queues.ts';
import { rerunPayDateProcessor } from '../../../jobs/rerun-pay-date.ts';
import { lockPayDateFailedForGood } from '../../../jobs/lock-pay-date.ts';
import { processorRegistry } from '../../../jobs/index.ts';

// The job contract without Redis: a queue that records what it is asked to add.

interface Added {
  name: string;
  data: unknown;
  opts?: unknown;
}

function recordingQueue(name: QueueName): { queue: JobQueue; added: Added[] } {
  const added: Added[] = [];
  const fake = {
    name,
    add: async (jobName: string, data: unknown, opts?: unknown) => {
      added.push({ name: jobName, data, opts });
      return { name: jobName, data, opts, getState: async () => 'waiting' };
    },
    addBulk: async (jobs: Added[]) => {
      added.push(...jobs);
      return jobs;
    },
  };
  return { queue: fake as unknown as JobQueue, added };
}

function recordingQueues(): { queues: JobQueues; added: Record<QueueName, Added[]> } {
  const entries = Object.values(queueNames).map((name) => [name, recordingQueue(name)] as const);
  return {
    queues: Object.fromEntries(entries.map(([name, { queue }]) => [name, queue])) as JobQueues,
    added: Object.fromEntries(entries.map(([name, { added }]) => [name, added])) as Record<QueueName, Added[]>,
  };
}

const PAYROLL = '0190a0b0-0000-7000-8000-000000000001';
const RUN = '0190a0b0-0000-7000-8000-000000000002';
const DELIVERY = '0190a0b0-0000-7000-8000-000000000003';
const RERUN = '0190a0b0-0000-7000-8000-000000000004';

const allJobNames = Object.values(queueWorkers).flatMap((worker) => [...worker.jobs]);

describe('the job catalogue has one payload schema per job', () => {
  it('every job a worker runs has a schema, and every schema is of a job a worker runs', () => {
    expect(Object.keys(jobPayloadSchemas).sort()).toEqual([...allJobNames].sort());
    expect(new Set(allJobNames).size).toBe(allJobNames.length);
  });

  it("knows each job's queue: the one whose worker runs it", () => {
    for (const [queue, { jobs }] of Object.entries(queueWorkers)) for (const job of jobs) expect(queueOfJob[job], job).toBe(queue);
    expect(Object.keys(queueOfJob).sort()).toEqual([...allJobNames].sort());
  });

  it('the processor registry and the catalogue name the same jobs on the same queues', () => {
    for (const [queue, entry] of Object.entries(processorRegistry)) {
      for (const job of Object.keys(entry.processors)) expect(queueOfJob[job as JobName], job).toBe(queue);
    }
  });

  it('accepts every payload producers build today, and those older jobs in Redis carry', () => {
    const accepted: Array<[JobName, unknown]> = [
      [nightlyTriggerJob, {}],
      [nightlyTriggerJob, { runDate: '2026-11-12', trigger: 'catch_up' }],
      [lockPayDateJob, { runId: RUN, payrollId: PAYROLL, payDate: '2026-11-22' }],
      // Queued before nightly runs were recorded: no run id.
      [lockPayDateJob, { payrollId: PAYROLL, payDate: '2026-11-22' }],
      [rerunPayDateJob, { rerunId: RERUN }],
      // The debounced request, and the sweep's (which carries `final`).
      [reconcilePayDateJob, { payrollId: PAYROLL, payDate: '2026-11-22' }],
      [reconcilePayDateJob, { payrollId: PAYROLL, payDate: '2026-11-22', final: true }],
      [reconcileSweepJob, {}],
      [reconcileSweepJob, { runDate: '2026-11-12' }],
      [runPayoutsJob, {}],
      [runPayoutsJob, { date: '2026-12-04' }],
      [dispatchEventsJob, {}],
      [deliverWebhookJob, { deliveryId: DELIVERY }],
      [purgeIdempotencyKeysJob, {}],
    ];
    for (const [name, payload] of accepted) expect(jobPayloadSchemas[name].safeParse(payload).success, `${name} ${JSON.stringify(payload)}`).toBe(true);
    expect(new Set(accepted.map(([name]) => name))).toEqual(new Set(allJobNames));
  });

  it('refuses payloads no processor could run', () => {
    const refused: Array<[JobName, unknown]> = [
      [lockPayDateJob, { runId: RUN, payDate: '2026-11-22' }],
      [lockPayDateJob, { runId: 'run-1', payrollId: PAYROLL, payDate: '2026-11-22' }],
      [lockPayDateJob, { payrollId: PAYROLL, payDate: '2026-02-30' }],
      [rerunPayDateJob, {}],
      [reconcilePayDateJob, { payrollId: PAYROLL, payDate: '2026-11-22', final: 'yes' }],
      [nightlyTriggerJob, { trigger: 'manual' }],
      [reconcileSweepJob, { runDate: '12/11/2026' }],
      [runPayoutsJob, { date: 20261204 }],
      [deliverWebhookJob, { deliveryId: 42 }],
    ];
    for (const [name, payload] of refused) expect(jobPayloadSchemas[name].safeParse(payload).success, `${name} ${JSON.stringify(payload)}`).toBe(false);
  });

  it("every recurring schedule adds a job its schema accepts, on the job's queue", () => {
    for (const schedule of recurringSchedules({ NIGHTLY_CRON: '0 1 * * *', SERVICE_TIME_ZONE: 'Europe/London' })) {
      expect(schedule.queue).toBe(queueOfJob[schedule.template.name]);
      expect(schedule.id).toBe(schedule.template.name);
      expect(() => checkJobPayload(schedule.template.name, schedule.template.data)).not.toThrow();
    }
  });
});

describe('producers queue through the contract', () => {
  it('the nightly run: a lock job per pay date, payloads and ids as before', async () => {
    const { queue, added } = recordingQueue(queueNames.payDates);
    await enqueueLockJobs(queue, RUN, [{ payrollId: PAYROLL, payDate: '2026-11-22', requeues: 1 }]);
    expect(added).toEqual([
      {
        name: lockPayDateJob,
        data: { runId: RUN, payrollId: PAYROLL, payDate: '2026-11-22' },
        opts: expect.objectContaining({ jobId: `lock.${RUN}.${PAYROLL}.2026-11-22.r1` }),
      },
    ]);
  });

  it('webhooks: admitted deliveries, redeliveries and a dispatcher run', async () => {
    const deliveries = recordingQueue(queueNames.webhookDeliveries);
    await enqueueAdmitted(deliveries.queue, [{ deliveryId: DELIVERY, jobId: `delivery.${DELIVERY}.1` } as never]);
    await enqueueDeliveries(deliveries.queue, [DELIVERY], { redelivery: true });
    await enqueueAdmitted(deliveries.queue, []);
    expect(deliveries.added.map(({ name, data }) => [name, data])).toEqual([
      [deliverWebhookJob, { deliveryId: DELIVERY }],
      [deliverWebhookJob, { deliveryId: DELIVERY }],
    ]);
    expect(deliveries.added[0]!.opts).toMatchObject({ jobId: `delivery.${DELIVERY}.1` });
    expect(deliveries.added[1]!.opts).toMatchObject({ jobId: expect.stringMatching(new RegExp(`^redelivery\\.${DELIVERY}\\.\\d+$`)) });

    const dispatch = recordingQueue(queueNames.webhookDispatch);
    await requestEventDispatch(dispatch.queue);
    expect(dispatch.added).toEqual([{ name: dispatchEventsJob, data: {}, opts: expect.objectContaining({ deduplication: { id: dispatchEventsJob } }) }]);
  });
});

describe('enqueueJob and enqueueJobs', () => {
  it("take the job's queue from the catalogue, and add the payload as the producer built it", async () => {
    const { queues, added } = recordingQueues();
    const options = debouncedReconcileJobOptions(PAYROLL, '2026-11-22', 5_000);
    await enqueueJob(queues, reconcilePayDateJob, { payrollId: PAYROLL, payDate: '2026-11-22' }, options);
    await enqueueJob(queues, nightlyTriggerJob, { runDate: '2026-11-12', trigger: 'catch_up' });
    // Defaults are the processor's to fill in: no `final` in what Redis keeps.
    expect(added['pay-dates']).toEqual([{ name: reconcilePayDateJob, data: { payrollId: PAYROLL, payDate: '2026-11-22' }, opts: options }]);
    expect(added.nightly).toEqual([{ name: nightlyTriggerJob, data: { runDate: '2026-11-12', trigger: 'catch_up' }, opts: undefined }]);
    expect([...added.maintenance, ...added['webhook-dispatch'], ...added['webhook-deliveries']]).toEqual([]);
  });

  it('refuse a queue other than the catalogue says, adding nothing', async () => {
    const nightly = recordingQueue(queueNames.nightly);
    await expect(enqueueJob(nightly.queue, rerunPayDateJob, { rerunId: RERUN })).rejects.toThrow('job rerun-pay-date goes on queue pay-dates, not nightly');
    await expect(enqueueJobs({} as JobQueues, rerunPayDateJob, [{ payload: { rerunId: RERUN } }])).rejects.toThrow(/goes on queue pay-dates/);
    expect(nightly.added).toEqual([]);
  });

  it('refuse a payload its schema does not accept, adding nothing, and say which job and field', async () => {
    const { queues, added } = recordingQueues();
    await expect(enqueueJob(queues, lockPayDateJob, { runId: RUN, payrollId: 'not-a-uuid', payDate: '2026-11-22' })).rejects.toThrow(
      /^job lock-pay-date not queued: its payload does not match the job catalogue's schema \(payrollId: must be a UUID\)$/,
    );
    // One bad payload in a bulk adds none of them.
    await expect(
      enqueueJobs(queues, deliverWebhookJob, [{ payload: { deliveryId: DELIVERY } }, { payload: { deliveryId: 'nope' } }, { payload: { deliveryId: DELIVERY } }]),
    ).rejects.toThrow(/job deliver-webhook not queued.*deliveryId/);
    // What TypeScript refuses at compile time, a caller that bypassed types meets at run time.
    await expect(enqueueJob(queues, rerunPayDateJob, { rerun: RERUN } as never)).rejects.toThrow(/rerunId/);
    expect(Object.values(added).flat()).toEqual([]);
  });

  it('type payloads by job name', () => {
    const { queues } = recordingQueues();
    const typeOnly = () => {
      // @ts-expect-error: a re-run job carries a re-run id
      void enqueueJob(queues, rerunPayDateJob, { payrollId: PAYROLL });
      // @ts-expect-error: no such job
      void enqueueJob(queues, 'lock-all-the-things', {});
      // @ts-expect-error: a nightly trigger is one of two kinds
      void enqueueJob(queues, nightlyTriggerJob, { trigger: 'manual' });
    };
    expect(typeOnly).toBeTypeOf('function');
  });
});

describe("a processor's payload", () => {
  it('is parsed with its schema: defaults filled in, unknown fields dropped, no data read as none', () => {
    expect(payloadOf({ data: {} }, nightlyTriggerJob)).toEqual({ trigger: 'schedule' });
    expect(payloadOf({ data: undefined }, reconcileSweepJob)).toEqual({});
    expect(payloadOf({ data: { payrollId: PAYROLL, payDate: '2026-11-22', extra: 1 } }, reconcilePayDateJob)).toEqual({
      payrollId: PAYROLL,
      payDate: '2026-11-22',
      final: false,
    });
  });

  it('fails the job for good when malformed (UnrecoverableError: BullMQ spends no retry on it), saying which job and why', () => {
    let thrown: unknown;
    try {
      payloadOf({ id: 'rerun.x', data: { rerunId: 'x' } }, rerunPayDateJob);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect((thrown as Error).name).toBe('UnrecoverableError');
    expect((thrown as Error).message).toBe(
      "malformed job rerun-pay-date rerun.x, not retried: its payload does not match the job catalogue's schema (rerunId: must be a UUID)",
    );
    expect(() => payloadOf({ data: null }, deliverWebhookJob)).toThrow(/^malformed job deliver-webhook, not retried/);
  });

  it("fails a processor's job before it does any work", async () => {
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('the processor reached its dependencies');
        },
      },
    );
    const processor = rerunPayDateProcessor(untouchable as never, untouchable as never, untouchable as never, untouchable as never, untouchable as never);
    await expect(processor({ id: '7', data: { rerunId: 42 } } as never)).rejects.toMatchObject({
      name: 'UnrecoverableError',
      message: expect.stringMatching(/^malformed job rerun-pay-date 7/),
    });
  });

  it('is undefined, not thrown, for a final-failure handler', async () => {
    expect(payloadOrUndefined({ data: { payrollId: PAYROLL } }, lockPayDateJob)).toBeUndefined();
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('the handler reached the database');
        },
      },
    );
    await expect(lockPayDateFailedForGood(untouchable as never)({ data: { runId: 'x' } } as never, new Error('boom'))).resolves.toBeUndefined();
  });
});
