// A payroll's go-live date is its first pay date to collect (decision 0016). Nothing before it is
// locked or caught up: a calendar generated today may well start with pay dates whose lock dates
// have passed, and locking those at once, empty, is what nobody meant.

/** Whether the service collects on this pay date of a payroll: on or after its go-live date; never before it has one. */
export function collectsPayDate(goLiveDate: string | null, payDate: string): boolean {
  return goLiveDate !== null && payDate >= goLiveDate;
}

export interface GoLivePayDate {
  pay_date: string;
  lock_date: string;
  locked: boolean;
}

/**
 * The go-live date a payroll gets when its first calendar is written: its first unlocked pay date
 * whose lock date is today or later, so the first night that locks it is still ahead. Null when the
 * calendar has none.
 */
export function defaultGoLiveDate(payDates: readonly GoLivePayDate[], today: string): string | null {
  const open = payDates.filter((d) => !d.locked && d.lock_date >= today).map((d) => d.pay_date);
  return open.length === 0 ? null : open.reduce((first, date) => (date < first ? date : first));
}

/**
 * What an operator should hear after writing a calendar: pay dates whose lock dates have passed are
 * either before the go-live date (never collected) or after it (the next nightly run locks them at
 * once, as a catch-up).
 */
export function calendarGoLiveWarnings(payDates: readonly GoLivePayDate[], goLiveDate: string | null, today: string): string[] {
  const overdue = payDates.filter((d) => !d.locked && d.lock_date < today).sort((a, b) => (a.pay_date < b.pay_date ? -1 : 1));
  const warnings: string[] = [];
  if (goLiveDate === null) {
    warnings.push('the payroll has no go-live date (no pay date has a lock date ahead): nothing is collected until one is set with deductions payrolls go-live');
  }
  const before = overdue.filter((d) => !collectsPayDate(goLiveDate, d.pay_date));
  const after = overdue.filter((d) => collectsPayDate(goLiveDate, d.pay_date));
  if (before.length > 0) {
    warnings.push(
      `${countOf(before.length)} with lock dates already past (${listOf(before)}) ${before.length === 1 ? 'is' : 'are'} ${
        goLiveDate === null ? 'not collected' : `before the go-live date ${goLiveDate} and ${before.length === 1 ? 'is' : 'are'} not collected`
      }`,
    );
  }
  if (after.length > 0) {
    warnings.push(
      `${countOf(after.length)} from the go-live date ${goLiveDate} on ${after.length === 1 ? 'has its lock date' : 'have lock dates'} already past (${listOf(after)}): the next nightly run locks ${
        after.length === 1 ? 'it' : 'them'
      } at once`,
    );
  }
  return warnings;
}

const SHOWN = 5;

function countOf(n: number): string {
  return `${n} pay date${n === 1 ? '' : 's'}`;
}

function listOf(payDates: readonly GoLivePayDate[]): string {
  const shown = payDates.slice(0, SHOWN).map((d) => `${d.pay_date}, lock date ${d.lock_date}`);
  return payDates.length > SHOWN ? `${shown.join('; ')}; and ${payDates.length - SHOWN} more` : shown.join('; ');
}
