// What a payroll needs before the nightly run can lock its pay dates. A pay date locked without it
// fails (no collection account to name in the instruction file) or locks for nothing (an employer
// that has not opted in), and a payroll without a go-live date is not collected at all. One rule for
// the command that lists what is missing before going live and for the nightly run, which holds back
// (skips, saying why) the due pay dates of a payroll that is not ready.

/** What the nightly run must know of a payroll with pay dates due before it locks them. */
export interface PayrollLockFacts {
  currency: string;
  employerOptIn: 'pending' | 'opted_in' | 'opted_out';
  hasActiveCollectionAccount: boolean;
}

/** What the database says of one payroll, as go-live readiness reads it. */
export interface PayrollReadinessFacts extends PayrollLockFacts {
  /** Its first pay date to collect; null while it has none (not live). */
  goLiveDate: string | null;
  /** Unlocked pay dates on or after today and its go-live date. */
  openPayDatesAhead: number;
  /** Unlocked pay dates from its go-live date on whose lock date is before today: the next nightly run locks them at once. */
  overduePayDates: number;
  /** The first of those, if any. */
  firstOverduePayDate: string | null;
}

export interface ReadinessFinding {
  /** Missing: the nightly run cannot lock the payroll as it should. Notice: it can, but perhaps not as meant. */
  severity: 'missing' | 'notice';
  code: 'go-live-date' | 'collection-account' | 'employer-opt-in' | 'calendar' | 'overdue-pay-dates';
  message: string;
}

/** Why the nightly run holds back a payroll's due pay dates: nothing when it can lock them. */
export function lockHoldReasons(facts: PayrollLockFacts): ReadinessFinding[] {
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
  return findings;
}

/** Everything missing before a payroll's pay dates can be locked, then what an operator should know. */
export function goLiveReadiness(facts: PayrollReadinessFacts): ReadinessFinding[] {
  const findings: ReadinessFinding[] = [];
  if (facts.goLiveDate === null) {
    findings.push({
      severity: 'missing',
      code: 'go-live-date',
      message: 'no go-live date, so nothing is collected: give it a calendar with a pay date ahead, or set one with deductions payrolls go-live',
    });
  }
  findings.push(...lockHoldReasons(facts));
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

/** The one sentence a skipped pay date keeps as its reason. */
export function holdReasonText(findings: readonly ReadinessFinding[]): string {
  return `not ready: ${findings.map((finding) => finding.message).join('; ')}`;
}
