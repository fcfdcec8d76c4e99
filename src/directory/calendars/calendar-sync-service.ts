import type { Logger } from 'pino';
import type { Database } from '../../platform/db/connection.ts';
import type { AdapterFactory } from '../payroll-providers/adapter.ts';
import { listPayrollsWithProviderApi, markCalendarSynced } from './calendar-repository.ts';
import { savePayCalendar } from './calendar-service.ts';

export interface CalendarSyncResult {
  synced: number;
  failed: Array<{ payrollId: string; reason: string }>;
}

const PARALLEL_REQUESTS = 8;

/**
 * Refreshes the calendars of payrolls whose provider exposes payroll information. One provider
 * being down must not stop the night: its payrolls keep the calendar we already have, and the
 * failure is reported.
 */
export async function syncPayrollCalendars(db: Database, adapterFor: AdapterFactory, today: string, logger?: Logger): Promise<CalendarSyncResult> {
  const payrolls = await listPayrollsWithProviderApi(db);
  const result: CalendarSyncResult = { synced: 0, failed: [] };
  let next = 0;
  async function lane() {
    while (next < payrolls.length) {
      const payroll = payrolls[next++]!;
      try {
        const adapter = adapterFor(payroll);
        if (!adapter) continue;
        const info = await adapter.payrollInformation(payroll.payroll_id);
        await db.transaction().execute(async (trx) => {
          await savePayCalendar(trx, payroll.payroll_id, info.payroll.pay_dates, today);
          await markCalendarSynced(trx, payroll.payroll_id);
        });
        result.synced++;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        logger?.warn({ payrollId: payroll.payroll_id, err: error }, 'calendar sync failed; keeping the stored calendar');
        result.failed.push({ payrollId: payroll.payroll_id, reason });
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL_REQUESTS, payrolls.length) }, lane));
  return result;
}
