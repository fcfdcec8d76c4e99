import type { FlowProducer, Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { serviceToday } from '../src/calendars/lock-date.ts';
import { triggerNightlyRun } from '../src/deductions/nightly-service.ts';
import { isoDateSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ runDate: isoDateSchema.optional() });

/** Fired by the job scheduler: today's run date is the service time zone's calendar date. */
export function nightlyTriggerProcessor(db: Database, flows: FlowProducer, timeZone: string) {
  return async (job: Job) => {
    const { runDate } = payloadSchema.parse(job.data ?? {});
    return triggerNightlyRun(db, flows, runDate ?? serviceToday(new Date(), timeZone));
  };
}
