export interface StoredPayDate {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
  lock_date: string;
  locked: boolean;
}

export interface NewPayDate {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
  lock_date: string;
}

export type CalendarRefusal =
  /** A locked pay date is in the range and the new calendar does not have it. */
  | { code: 'locked-pay-date-removed'; payDate: string }
  /** The new calendar has a locked pay date with another cut-off or pay period. */
  | { code: 'locked-pay-date-altered'; payDate: string; field: 'payroll_cutoff_date' | 'pay_period' }
  /** The new calendar gives a locked pay date's pay period to another day. */
  | { code: 'locked-pay-date-moved'; payDate: string; movedTo: string; payPeriod: string }
  /** A pay date outside the range already holds this pay period. */
  | { code: 'pay-period-taken'; payDate: string; payPeriod: string; takenBy: string }
  /** The new calendar itself names a pay date or a pay period twice. */
  | { code: 'duplicate-pay-date'; payDate: string }
  | { code: 'duplicate-pay-period'; payDate: string; payPeriod: string };

export interface CalendarReplacementPlan {
  /** Pay dates the payroll does not have yet. */
  add: NewPayDate[];
  /** Unlocked pay dates kept on their day with a new cut-off, pay period or lock date. */
  change: NewPayDate[];
  /** Unlocked pay dates in the range that the new calendar does not have. */
  remove: string[];
  /** Pay dates the new calendar leaves exactly as they are, locked ones among them. */
  unchanged: string[];
}

export type CalendarReplacementResult = { ok: true; plan: CalendarReplacementPlan } | { ok: false; refusals: CalendarRefusal[] };

/**
 * What a new calendar does to a payroll's stored one: within its range [from, until] it replaces
 * the unlocked pay dates (adds, changes, removes); outside the range nothing changes. A locked pay
 * date has been locked and instructed, so the new calendar must keep it exactly (same day, cut-off
 * and pay period; its lock date is history and is not compared): a change that would remove,
 * alter or move one is refused whole, naming every such date, as are pay periods that clash with
 * pay dates outside the range (the payroll's pay periods are unique) and a calendar that repeats
 * itself. Whether an unlocked pay date may go (payment requests may target it) is the caller's to
 * check: that needs the database.
 */
export function planCalendarReplacement(input: {
  stored: readonly StoredPayDate[];
  incoming: readonly NewPayDate[];
  range: { from: string; until: string };
}): CalendarReplacementResult {
  const { stored, incoming, range } = input;
  const refusals: CalendarRefusal[] = [];
  const inRange = (date: string) => date >= range.from && date <= range.until;

  const incomingByDate = new Map<string, NewPayDate>();
  const incomingByPeriod = new Map<string, NewPayDate>();
  for (const payDate of incoming) {
    if (incomingByDate.has(payDate.pay_date)) refusals.push({ code: 'duplicate-pay-date', payDate: payDate.pay_date });
    else incomingByDate.set(payDate.pay_date, payDate);
    if (incomingByPeriod.has(payDate.pay_period)) {
      refusals.push({ code: 'duplicate-pay-period', payDate: payDate.pay_date, payPeriod: payDate.pay_period });
    } else incomingByPeriod.set(payDate.pay_period, payDate);
  }

  const storedByDate = new Map(stored.map((payDate) => [payDate.pay_date, payDate]));
  for (const old of stored) {
    const replacement = incomingByDate.get(old.pay_date);
    const samePeriodElsewhere = incomingByPeriod.get(old.pay_period);
    if (old.locked) {
      if (samePeriodElsewhere && samePeriodElsewhere.pay_date !== old.pay_date) {
        refusals.push({ code: 'locked-pay-date-moved', payDate: old.pay_date, movedTo: samePeriodElsewhere.pay_date, payPeriod: old.pay_period });
      } else if (replacement && replacement.payroll_cutoff_date !== old.payroll_cutoff_date) {
        refusals.push({ code: 'locked-pay-date-altered', payDate: old.pay_date, field: 'payroll_cutoff_date' });
      } else if (replacement && replacement.pay_period !== old.pay_period) {
        refusals.push({ code: 'locked-pay-date-altered', payDate: old.pay_date, field: 'pay_period' });
      } else if (!replacement && inRange(old.pay_date)) {
        refusals.push({ code: 'locked-pay-date-removed', payDate: old.pay_date });
      }
    } else if (!inRange(old.pay_date) && samePeriodElsewhere && samePeriodElsewhere.pay_date !== old.pay_date) {
      refusals.push({ code: 'pay-period-taken', payDate: samePeriodElsewhere.pay_date, payPeriod: old.pay_period, takenBy: old.pay_date });
    }
  }
  if (refusals.length > 0) return { ok: false, refusals };

  const plan: CalendarReplacementPlan = { add: [], change: [], remove: [], unchanged: [] };
  for (const payDate of incomingByDate.values()) {
    const old = storedByDate.get(payDate.pay_date);
    if (!old) plan.add.push(payDate);
    else if (old.locked || (old.payroll_cutoff_date === payDate.payroll_cutoff_date && old.pay_period === payDate.pay_period && old.lock_date === payDate.lock_date)) {
      plan.unchanged.push(payDate.pay_date);
    } else plan.change.push(payDate);
  }
  for (const old of stored) {
    if (!old.locked && inRange(old.pay_date) && !incomingByDate.has(old.pay_date)) plan.remove.push(old.pay_date);
  }
  plan.add.sort(byPayDate);
  plan.change.sort(byPayDate);
  plan.remove.sort();
  plan.unchanged.sort();
  return { ok: true, plan };
}

function byPayDate(a: NewPayDate, b: NewPayDate): number {
  return a.pay_date < b.pay_date ? -1 : a.pay_date > b.pay_date ? 1 : 0;
}
