import type { Job } from 'bullmq';
import { z } from 'zod';
import { collectNightlySummary } from '../src/deductions/nightly-service.ts';
import { isoDateSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ runDate: isoDateSchema, pairCount: z.number().int() });

/** Runs once every pay date of the run has finished (or failed for good): the run's summary. */
export function nightlyRunProcessor() {
  return async (job: Job) => {
    payloadSchema.parse(job.data);
    return collectNightlySummary(job);
  };
}
