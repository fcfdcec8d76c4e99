import { describe, expect, it } from 'vitest';
import { goLiveReadiness, isReadyToGoLive, type PayrollReadinessFacts } from '../../../src/cycle/nightly/go-live-readiness.ts';

const ready: PayrollReadinessFacts = {
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
