import type { Job } from 'bullmq';
import { consoleActor, recordAction } from '../../../platform/audit/audit-service.ts';
import { ConflictError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { actionForm, dataTable } from '../console-layout.ts';
import { consolePermits } from '../console-permissions.ts';
import { CONSOLE_FORM_LIMIT_BYTES, type ConsolePageModule } from '../console-plugin.ts';
import { isQueueName } from '../console-queues.ts';
import { formatInstant } from '../console-format.ts';
import { html } from '../html.ts';
import { findJobSubjectNames } from '../../attention/attention-repository.ts';
import { describeJob, jobSubjectIdSets } from '../../attention/job-subject.ts';

/** The most failed jobs listed per queue (BullMQ's range is inclusive: 0..99). */
const FAILED_JOBS_PER_QUEUE = 100;
const DATA_SUMMARY_CHARACTERS = 160;

function dataSummary(job: Job): string {
  const json = JSON.stringify(job.data ?? null) ?? 'null';
  return json.length > DATA_SUMMARY_CHARACTERS ? `${json.slice(0, DATA_SUMMARY_CHARACTERS - 1)}…` : json;
}

const retryPath = (queueName: string, jobId: string) => `/console/jobs/${encodeURIComponent(queueName)}/${encodeURIComponent(jobId)}/retry`;

/** Jobs that failed for good on every queue, and the operator's retry. */
export const registerFailedJobsPage: ConsolePageModule = (app, context) => {
  app.get('/jobs', async (request, reply) => {
    const session = context.session(request);
    const mayRetry = consolePermits(session.role, 'retry_job');
    const queues = await context.queues.all();
    const failed = (await Promise.all(queues.map(async (queue) => (await queue.getFailed(0, FAILED_JOBS_PER_QUEUE - 1)).map((job) => ({ queue: queue.name, job })))))
      .flat()
      .filter(({ job }) => job !== undefined && job !== null);
    const names = await findJobSubjectNames(context.deps.db, jobSubjectIdSets(failed.map(({ job }) => job.data)));
    const csrf = context.csrfToken(request, reply);
    return context.page(request, reply, {
      title: 'Failed jobs',
      section: 'jobs',
      body: html`<p>Jobs that used every attempt and failed, newest first per queue (up to ${FAILED_JOBS_PER_QUEUE} a queue). ${mayRetry ? 'Retry runs a job again from its first attempt.' : 'Only operators can retry a job.'}</p>
${dataTable(
  'Failed jobs of every queue',
  ['What it was for', 'Failed because', 'Attempts', 'Finished', 'Queue and id', ...(mayRetry ? ['Action'] : [])],
  failed.map(({ queue, job }) => {
    const description = describeJob(job.name, job.data, names);
    return [
      description,
      job.failedReason ?? '—',
      job.attemptsMade,
      formatInstant(job.finishedOn === undefined ? null : new Date(job.finishedOn)),
      // Support asks for the id and the payload; they stay one click away.
      html`<details><summary>${queue} / ${job.name}</summary><p><code>${job.id ?? '—'}</code></p><p><code>${dataSummary(job)}</code></p></details>`,
      ...(mayRetry && job.id ? [actionForm(retryPath(queue, job.id), csrf, `Retry the ${description}`)] : []),
    ];
  }),
  'No failed job.',
)}`,
    });
  });

  app.post<{ Params: { queue: string; jobId: string } }>('/jobs/:queue/:jobId/retry', { bodyLimit: CONSOLE_FORM_LIMIT_BYTES }, async (request, reply) => {
    const session = context.requirePermission(request, 'retry_job');
    const { queue: queueName, jobId } = request.params;
    if (!isQueueName(queueName)) throw new NotFoundError(`Queue ${queueName}`);
    const queue = await context.queues.queue(queueName);
    const job = await queue.getJob(jobId);
    if (!job) throw new NotFoundError(`Job ${jobId} on ${queueName}`);
    const state = await job.getState();
    if (state !== 'failed') throw new ConflictError('job-not-failed', `Job ${jobId} on ${queueName} is ${state}, not failed: only a failed job can be retried.`);
    // The audit row commits only if the retry went through: a retry that throws rolls it back.
    await context.deps.db.transaction().execute(async (trx) => {
      await recordAction(trx, {
        actor: consoleActor(session.email),
        action: 'job.retried',
        resourceType: 'job',
        resourceId: `${queueName}/${jobId}`,
        reason: null,
        before: { name: job.name, state, attempts_made: job.attemptsMade, failed_reason: job.failedReason ?? null },
      });
      await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    });
    const names = await findJobSubjectNames(context.deps.db, jobSubjectIdSets([job.data]));
    return context.redirectWithNotice(reply, '/console/jobs', `The ${describeJob(job.name, job.data, names)} is queued again (job ${jobId} on ${queueName}).`);
  });
};
