import type { Executor } from '../../platform/db/connection.ts';
import { serviceToday } from '../../directory/calendars/lock-date.ts';
import { goLiveReadiness, isReadyToGoLive, type ReadinessFinding } from './go-live-readiness.ts';
import { listPayrollReadinessFacts } from './go-live-readiness-repository.ts';

export interface PayrollReadiness {
  payrollId: string;
  payroll: string;
  employer: string;
  provider: string;
  currency: string;
  /** Its first pay date to collect; null while it is not live. */
  goLiveDate: string | null;
  ready: boolean;
  findings: ReadinessFinding[];
}

/** What each live payroll (or one) still needs before the nightly run can lock its pay dates, as of today in the service time zone. */
export async function listPayrollReadiness(db: Executor, options: { now: Date; timeZone: string; payrollId?: string }): Promise<PayrollReadiness[]> {
  const rows = await listPayrollReadinessFacts(db, serviceToday(options.now, options.timeZone), options.payrollId);
  return rows.map((row) => {
    const findings = goLiveReadiness(row);
    return {
      payrollId: row.payrollId,
      payroll: row.payroll,
      employer: row.employer,
      provider: row.provider,
      currency: row.currency,
      goLiveDate: row.goLiveDate,
      ready: isReadyToGoLive(findings),
      findings,
    };
  });
}
