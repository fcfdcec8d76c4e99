// What a payroll needs before the nightly run can lock its pay dates, checked before going live. A
// pay date locked without it fails (no collection account to name in the instruction file) or locks
// for nothing (an employer that has not opted in), and a calendar generated with lock dates already
// behind it is caught up by the next run at once. One rule for the command that lists what is
// missing and, later, for the nightly run that waits for it.

/** What the database says of one payroll, as go-live readiness reads it. */
export interface PayrollReadinessFacts {
  currency: string;
  employerOptIn: 'pending' | 'opted_in' | 'opted_out';
  hasActiveCollectionAccount: boolean;
  /** Unlocked pay dates on or after today. */
  openPayDatesAhead: number;
  /** Unlocked pay dates whose lock date is before today: the next nightly run locks them at once. */
  overduePayDates: number;
  /** The first of those, if any. */
  firstOverduePayDate: string | null;
}

export interface ReadinessFinding {
  /** Missing: the nightly run cannot lock the payroll as it should. Notice: it can, but perhaps not as meant. */
  severity: 'missing' | 'notice';
  code: 'collection-account' | 'employer-opt-in' | 'calendar' | 'overdue-pay-dates';
  message: string;
}

/** Everything missing before a payroll's pay dates can be locked, then what an operator should know. */
export function goLiveReadiness(facts: PayrollReadinessFacts): ReadinessFinding[] {
  const findings: ReadinessFinding[] = [];
  if (!facts.hasActiveCollectionAccount) {
    findings.push({
      severity: 'missing',
      code: 'collection-account',
      message: `no active collection account for ${facts.currency}: set one with deductions collection-accounts set`,
    });
  }
  if (facts.employerOptIn !== 'opted_in') {
    findings.push({
      severity: 'missing',
      code: 'employer-opt-in',
      message: `the employer has not opted in (${facts.employerOptIn.replace('_', ' ')}): deductions employers set-opt-in`,
    });
  }
  if (facts.openPayDatesAhead === 0) {
    findings.push({ severity: 'missing', code: 'calendar', message: 'no open pay date ahead: generate, import or sync its calendar (deductions calendars)' });
  }
  if (facts.overduePayDates > 0) {
    const plural = facts.overduePayDates === 1 ? 'pay date' : 'pay dates';
    findings.push({
      severity: 'notice',
      code: 'overdue-pay-dates',
      message: `${facts.overduePayDates} unlocked ${plural} with lock dates already past (first ${facts.firstOverduePayDate}): the next nightly run locks them at once`,
    });
  }
  return findings;
}

/** Ready when nothing is missing; notices do not hold a payroll back. */
export function isReadyToGoLive(findings: readonly ReadinessFinding[]): boolean {
  return findings.every((finding) => finding.severity !== 'missing');
}
