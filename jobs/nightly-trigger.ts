import type { Job } from 'bullmq';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import type { Logger } from 'pino';
import { syncPayrollCalendars } from '../src/directory/calendars/calendar-sync-service.ts';
import { triggerNightlyRun } from '../src/cycle/nightly/nightly-service.ts';
import type { AdapterFactory } from '../src/directory/payroll-providers/adapter.ts';
import { nightlyTriggerJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';
import type { JobQueue } from '../src/platform/queue/queues.ts';

/**
 * Refreshes calendars from providers with an API, then starts the run for today (the service time
 * zone's calendar date) or the given date. A repeat of the same trigger joins the run it started.
 */
export function nightlyTriggerProcessor(db: Database, payDates: JobQueue, adapterFor: AdapterFactory, timeZone: string, logger: Logger) {
  return async (job: Job) => {
    const { runDate, trigger } = payloadOf(job, nightlyTriggerJob);
    const calendars = await syncPayrollCalendars(db, adapterFor, serviceToday(new Date(), timeZone), logger);
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
