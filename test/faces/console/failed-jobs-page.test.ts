import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queueNames } from '../../../src/platform/queue/job-catalogue.ts';
import { producerConnection } from '../../../src/platform/runtime/redis-connections.ts';
import { failedJob } from '../../support/jobs.ts';
import { signedInAs } from '../../support/console.ts';
import { startTestApp, type TestApp } from '../../support/test-app.ts';

let t: TestApp;
let maintenance: Queue;
beforeAll(async () => {
  t = await startTestApp();
  maintenance = new Queue(queueNames.maintenance, { connection: producerConnection(t.config.REDIS_URL), prefix: t.config.QUEUE_PREFIX });
  await maintenance.waitUntilReady();
});
afterAll(async () => {
  await maintenance?.close();
  await t?.close();
});

const failedMaintenanceJob = (name: string, data: Record<string, unknown>) => failedJob(maintenance, t.config.REDIS_URL, name, data);

function rowWith(page: string, text: string): string | undefined {
  return page.match(/<tr>[\s\S]*?<\/tr>/g)?.find((row) => row.includes(text));
}

describe('console failed jobs', () => {
  it('lists a failed job with its reason and data, and an operator retries it (audited)', async () => {
    const job = await failedMaintenanceJob('bogus-job', { payrollId: 'p-1', note: 'made to fail' });
    const { browser, user } = await signedInAs(t.app, t.db, 'operator');
    const page = await browser.get('/console/jobs');
    expect(page.statusCode).toBe(200);
    const row = rowWith(page.body, 'bogus-job');
    expect(row).toContain('maintenance / bogus-job');
    expect(row).toContain(`<code>${job.id}</code>`);
    expect(row).toContain('no processor for bogus-job');
    expect(row).toContain('made to fail');
    expect(row).toContain(`action="/console/jobs/maintenance/${job.id}/retry"`);

    const retried = await browser.post(`/console/jobs/maintenance/${job.id}/retry`);
    expect(retried.statusCode).toBe(303);
    expect(retried.headers.location).toBe('/console/jobs');
    expect(['waiting', 'active']).toContain(await (await maintenance.getJob(job.id!))!.getState());
    const audit = await t.db.selectFrom('audit_log').selectAll().where('action', '=', 'job.retried').execute();
    expect(audit.map((a) => [a.actor_kind, a.actor, a.resource_type, a.resource_id])).toEqual([['console', user.email, 'job', `maintenance/${job.id}`]]);

    const after = await browser.get('/console/jobs');
    expect(after.body).toContain('is queued again');
    expect(rowWith(after.body, `<code>${job.id}</code>`)).toBeUndefined();

    // No longer failed: a second retry is refused and recorded nowhere.
    const again = await browser.post(`/console/jobs/maintenance/${job.id}/retry`);
    expect(again.statusCode).toBe(409);
    expect(await t.db.selectFrom('audit_log').select('id').where('action', '=', 'job.retried').execute()).toHaveLength(1);
  });

  it('refuses a viewer (403, the job stays failed) and answers 404 for an unknown queue or job', async () => {
    const job = await failedMaintenanceJob('another-bogus-job', { n: 2 });
    const viewer = (await signedInAs(t.app, t.db, 'viewer')).browser;
    const page = await viewer.get('/console/jobs');
    expect(rowWith(page.body, 'another-bogus-job')).not.toContain('<form');
    expect(page.body).toContain('Only operators can retry a job.');
    const refused = await viewer.post(`/console/jobs/maintenance/${job.id}/retry`);
    expect(refused.statusCode).toBe(403);
    expect(await job.getState()).toBe('failed');
    expect(await t.db.selectFrom('audit_log').select('id').where('resource_id', '=', `maintenance/${job.id}`).execute()).toEqual([]);

    const operator = (await signedInAs(t.app, t.db, 'operator')).browser;
    expect((await operator.post(`/console/jobs/no-such-queue/${job.id}/retry`)).statusCode).toBe(404);
    expect((await operator.post(`/console/jobs/maintenance/999999/retry`)).statusCode).toBe(404);
    expect(await job.getState()).toBe('failed');
  });
});
