import type { Job, Queue } from 'bullmq';
import { z } from 'zod';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import type { Logger } from 'pino';
import { syncPayrollCalendars } from '../src/directory/calendars/calendar-sync-service.ts';
import { triggerNightlyRun } from '../src/cycle/nightly/nightly-service.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import { isoDateSchema } from '../src/platform/shared/schemas.ts';

// Fired by the job scheduler (no data), or by the watchdog for a run date whose trigger never ran.
const payloadSchema = z.object({ runDate: isoDateSchema.optional(), trigger: z.enum(['schedule', 'catch_up']).default('schedule') });

/**
 * Refreshes calendars from providers with an API, then starts the run for today (the service time
 * zone's calendar date) or the given date. A repeat of the same trigger joins the run it started.
 */
export function nightlyTriggerProcessor(db: Database, payDates: Queue, adapterFor: AdapterFactory, timeZone: string, logger: Logger) {
  return async (job: Job) => {
    const { runDate, trigger } = payloadSchema.parse(job.data ?? {});
    const calendars = await syncPayrollCalendars(db, adapterFor, logger);
    const { run, joined } = await triggerNightlyRun(db, payDates, runDate ?? serviceToday(new Date(), timeZone), { kind: trigger });
    logger.info({ runId: run.id, runDate: run.run_date, trigger, joined, payDatesDue: run.pay_dates_due }, joined ? 'nightly run joined' : 'nightly run started');
    return {
      runId: run.id,
      runDate: run.run_date,
      joined,
      payDatesDue: run.pay_dates_due,
      calendarsSynced: calendars.synced,
      calendarSyncFailures: calendars.failed,
    };
  };
}
