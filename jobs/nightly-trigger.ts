import type { FlowProducer, Job } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/db/connection.ts';
import { serviceToday } from '../src/calendars/lock-date.ts';
import type { Logger } from 'pino';
import { syncPayrollCalendars } from '../src/calendars/calendar-sync-service.ts';
import { triggerNightlyRun } from '../src/deductions/nightly-service.ts';
import type { AdapterFactory } from '../src/payroll-providers/adapter.ts';
import { isoDateSchema } from '../src/shared/schemas.ts';

const payloadSchema = z.object({ runDate: isoDateSchema.optional() });

/**
 * Fired by the job scheduler: refresh calendars from providers with an API, then add the run for
 * today (the service time zone's calendar date).
 */
export function nightlyTriggerProcessor(db: Database, flows: FlowProducer, adapterFor: AdapterFactory, timeZone: string, logger: Logger) {
  return async (job: Job) => {
    const { runDate } = payloadSchema.parse(job.data ?? {});
    const calendars = await syncPayrollCalendars(db, adapterFor, logger);
    const trigger = await triggerNightlyRun(db, flows, runDate ?? serviceToday(new Date(), timeZone));
    return { ...trigger, calendarsSynced: calendars.synced, calendarSyncFailures: calendars.failed };
  };
}
