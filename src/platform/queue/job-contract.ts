import { UnrecoverableError, type Job, type JobsOptions } from 'bullmq';
import type { z } from 'zod';
import { jobPayloadSchemas, queueOfJob, type JobName, type JobPayload, type ParsedJobPayload, type QueueOfJob } from './job-catalogue.ts';
import type { JobQueue, JobQueues } from './queues.ts';

// The job contract: a job is added with its catalogue name and a payload its schema accepts, on the
// queue the catalogue puts it on, and its processor reads the payload through the same schema.

/**
 * Where a job of this name may be added: the producer queues by name (the job's own is taken from
 * the catalogue), or the job's own queue itself (checked against the catalogue).
 */
export type QueuesFor<Name extends JobName> = Pick<JobQueues, QueueOfJob<Name>> | JobQueue;

/** One job of a bulk add. */
export interface JobToAdd<Name extends JobName> {
  payload: JobPayload<Name>;
  options?: JobsOptions;
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message)).join('; ');
}

const isQueue = (queues: object): queues is JobQueue => typeof (queues as Partial<JobQueue>).addBulk === 'function';

/** The catalogue's queue of the job: picked from the queues by name, or the queue given, if it is that one. */
function queueOf<Name extends JobName>(queues: QueuesFor<Name>, name: Name): JobQueue {
  const wanted = queueOfJob[name];
  const queue = isQueue(queues) ? queues : (queues as Partial<JobQueues>)[wanted];
  if (queue === undefined) throw new Error(`job ${name} goes on queue ${wanted}, and no such queue was given`);
  if (queue.name !== wanted) throw new Error(`job ${name} goes on queue ${wanted}, not ${queue.name}`);
  return queue;
}

/**
 * The payload as given, once its schema accepts it: a producer's mistake throws here, before Redis
 * holds a job no processor could run. What is added is what the producer built (defaults are the
 * processor's to fill in), so a job's data reads the same in Redis as in the code that queued it.
 */
export function checkJobPayload<Name extends JobName>(name: Name, payload: JobPayload<Name>): JobPayload<Name> {
  const parsed = jobPayloadSchemas[name].safeParse(payload);
  if (!parsed.success) throw new Error(`job ${name} not queued: its payload does not match the job catalogue's schema (${describeIssues(parsed.error)})`);
  return payload;
}

/** Adds one job to its catalogue queue, its payload checked against its schema first. */
export async function enqueueJob<Name extends JobName>(
  queues: QueuesFor<Name>,
  name: Name,
  payload: JobPayload<Name>,
  options?: JobsOptions,
): Promise<Job<JobPayload<Name>, unknown, Name>> {
  const queue = queueOf(queues, name);
  const data = checkJobPayload(name, payload);
  return (await queue.add(name, data, options)) as Job<JobPayload<Name>, unknown, Name>;
}

/**
 * Adds jobs of one name to their catalogue queue in one round trip. Every payload is checked before
 * any job is added, so a bad one adds none. No jobs, no round trip.
 */
export async function enqueueJobs<Name extends JobName>(
  queues: QueuesFor<Name>,
  name: Name,
  jobs: ReadonlyArray<JobToAdd<Name>>,
): Promise<Array<Job<JobPayload<Name>, unknown, Name>>> {
  const queue = queueOf(queues, name);
  const bulk = jobs.map(({ payload, options }) => ({ name, data: checkJobPayload(name, payload), ...(options ? { opts: options } : {}) }));
  if (bulk.length === 0) return [];
  return (await queue.addBulk(bulk)) as Array<Job<JobPayload<Name>, unknown, Name>>;
}

/** What a processor needs of its job to read the payload. */
export type JobWithPayload = Pick<Job, 'data'> & { id?: string | undefined };

/**
 * A processor's payload, parsed with its job's schema (defaults filled in, unknown fields dropped).
 * A payload the schema refuses fails the job for good (UnrecoverableError): every retry would fail
 * the same way, so none is spent, and the failed job keeps the message for whoever looks.
 */
export function payloadOf<Name extends JobName>(job: JobWithPayload, name: Name): ParsedJobPayload<Name> {
  const parsed = jobPayloadSchemas[name].safeParse(job.data ?? {});
  if (!parsed.success) {
    const which = job.id === undefined ? name : `${name} ${job.id}`;
    throw new UnrecoverableError(`malformed job ${which}, not retried: its payload does not match the job catalogue's schema (${describeIssues(parsed.error)})`);
  }
  return parsed.data as ParsedJobPayload<Name>;
}

/** The payload, or undefined for a malformed one: for handlers that must not throw (a final failure's). */
export function payloadOrUndefined<Name extends JobName>(job: JobWithPayload, name: Name): ParsedJobPayload<Name> | undefined {
  const parsed = jobPayloadSchemas[name].safeParse(job.data ?? {});
  return parsed.success ? (parsed.data as ParsedJobPayload<Name>) : undefined;
}
