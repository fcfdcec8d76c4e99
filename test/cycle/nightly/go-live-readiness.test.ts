import { describe, expect, it } from 'vitest';
import { goLiveReadiness, holdReasonText, isReadyToGoLive, lockHoldReasons, type PayrollReadinessFacts } from '../../../src/cycle/nightly/go-live-readiness.ts';

const ready: PayrollReadinessFacts = {
  goLiveDate: '2026-12-31',
  currency: 'GBP',
  employerOptIn: 'opted_in',
  hasActiveCollectionAccount: true,
  openPayDatesAhead: 6,
  overduePayDates: 0,
  firstOverduePayDate: null,
};

describe('goLiveReadiness', () => {
  it('finds nothing when the payroll has a collection account, an opted-in employer and a calendar ahead', () => {
    expect(goLiveReadiness(ready)).toEqual([]);
    expect(isReadyToGoLive([])).toBe(true);
  });

  it('names each missing thing, whatever else is missing, and is not ready while any is', () => {
    const cases: Array<[Partial<PayrollReadinessFacts>, string]> = [
      [{ goLiveDate: null }, 'go-live-date'],
      [{ hasActiveCollectionAccount: false }, 'collection-account'],
      [{ employerOptIn: 'pending' }, 'employer-opt-in'],
      [{ employerOptIn: 'opted_out' }, 'employer-opt-in'],
      [{ openPayDatesAhead: 0 }, 'calendar'],
    ];
    // Every combination of the missing things: each finding appears exactly when its fact says so.
    for (let mask = 0; mask < 1 << cases.length; mask++) {
      const chosen = cases.filter((_, i) => mask & (1 << i));
      const facts = Object.assign({}, ready, ...chosen.map(([change]) => change)) as PayrollReadinessFacts;
      const findings = goLiveReadiness(facts);
      const expected = [...new Set(chosen.map(([, code]) => code))];
      expect(findings.map((f) => f.code).sort(), JSON.stringify(facts)).toEqual(expected.sort());
      expect(findings.every((f) => f.severity === 'missing')).toBe(true);
      expect(isReadyToGoLive(findings)).toBe(chosen.length === 0);
    }
  });

  it('says which currency lacks a collection account and which command sets one', () => {
    const [finding] = goLiveReadiness({ ...ready, currency: 'EUR', hasActiveCollectionAccount: false });
    expect(finding!.message).toBe('no active collection account for EUR: set one with deductions collection-accounts set');
  });

  it('notices pay dates whose lock dates have passed without holding the payroll back', () => {
    const findings = goLiveReadiness({ ...ready, overduePayDates: 2, firstOverduePayDate: '2026-11-30' });
    expect(findings).toEqual([
      {
        severity: 'notice',
        code: 'overdue-pay-dates',
        message: '2 unlocked pay dates with lock dates already past (first 2026-11-30): the next nightly run locks them at once',
      },
    ]);
    expect(isReadyToGoLive(findings)).toBe(true);
    expect(goLiveReadiness({ ...ready, overduePayDates: 1, firstOverduePayDate: '2026-11-30' })[0]!.message).toMatch(/^1 unlocked pay date with/);
  });
});

describe('lockHoldReasons: why the nightly run skips a payroll with pay dates due', () => {
  it('holds back a payroll without an active collection account or an opted-in employer, and nothing else', () => {
    for (const hasActiveCollectionAccount of [true, false]) {
      for (const employerOptIn of ['pending', 'opted_in', 'opted_out'] as const) {
        const codes = lockHoldReasons({ currency: 'GBP', hasActiveCollectionAccount, employerOptIn }).map((f) => f.code);
        const expected = [...(hasActiveCollectionAccount ? [] : ['collection-account']), ...(employerOptIn === 'opted_in' ? [] : ['employer-opt-in'])];
        expect(codes).toEqual(expected);
      }
    }
  });

  it('is the readiness rule with the calendar and go-live findings left out: one rule for both', () => {
    const facts = { ...ready, goLiveDate: null, hasActiveCollectionAccount: false, employerOptIn: 'opted_out' as const, openPayDatesAhead: 0 };
    const lockCodes = lockHoldReasons(facts).map((f) => f.code);
    expect(goLiveReadiness(facts).filter((f) => lockCodes.includes(f.code))).toEqual(lockHoldReasons(facts));
  });

  it('keeps one sentence as the skipped pay date reason', () => {
    expect(holdReasonText(lockHoldReasons({ currency: 'GBP', hasActiveCollectionAccount: false, employerOptIn: 'pending' }))).toBe(
      'not ready: no active collection account for GBP: set one with deductions collection-accounts set; the employer has not opted in (pending): deductions employers set-opt-in',
    );
  });
});
