import { describe, expect, it } from 'vitest';
import { type NewPayDate, planCalendarReplacement, type StoredPayDate } from '../../../src/directory/calendars/calendar-replacement.ts';

const payDate = (date: string, period: string, overrides: Partial<StoredPayDate> = {}): StoredPayDate => ({
  pay_date: date,
  payroll_cutoff_date: `${date.slice(0, 8)}01`,
  pay_period: period,
  lock_date: `${date.slice(0, 8)}01`,
  locked: false,
  ...overrides,
});
const incoming = (date: string, period: string, overrides: Partial<NewPayDate> = {}): NewPayDate => {
  const { locked: _locked, ...rest } = payDate(date, period);
  return { ...rest, ...overrides };
};

const JAN_LOCKED = payDate('2027-01-29', '10-2026', { locked: true });
const FEB = payDate('2027-02-26', '11-2026');
const MAR = payDate('2027-03-31', '12-2026');
const RANGE = { from: '2027-01-01', until: '2027-03-31' };

describe('planCalendarReplacement: accepted', () => {
  it.each([
    {
      name: 'the same calendar changes nothing',
      stored: [JAN_LOCKED, FEB, MAR],
      incoming: [incoming('2027-01-29', '10-2026'), incoming('2027-02-26', '11-2026'), incoming('2027-03-31', '12-2026')],
      plan: { add: [], change: [], remove: [], unchanged: ['2027-01-29', '2027-02-26', '2027-03-31'] },
    },
    {
      name: 'an unlocked pay date moves: the old day goes, the new one comes with its period',
      stored: [JAN_LOCKED, FEB, MAR],
      incoming: [incoming('2027-01-29', '10-2026'), incoming('2027-02-25', '11-2026'), incoming('2027-03-31', '12-2026')],
      plan: { add: [incoming('2027-02-25', '11-2026')], change: [], remove: ['2027-02-26'], unchanged: ['2027-01-29', '2027-03-31'] },
    },
    {
      name: "an unlocked pay date's cut-off and lock date change in place",
      stored: [JAN_LOCKED, FEB, MAR],
      incoming: [
        incoming('2027-01-29', '10-2026'),
        incoming('2027-02-26', '11-2026', { payroll_cutoff_date: '2027-02-19', lock_date: '2027-02-17' }),
        incoming('2027-03-31', '12-2026'),
      ],
      plan: {
        add: [],
        change: [incoming('2027-02-26', '11-2026', { payroll_cutoff_date: '2027-02-19', lock_date: '2027-02-17' })],
        remove: [],
        unchanged: ['2027-01-29', '2027-03-31'],
      },
    },
    {
      name: "a locked pay date's lock date is history: a new one is not a change",
      stored: [JAN_LOCKED],
      incoming: [incoming('2027-01-29', '10-2026', { lock_date: '2026-12-31' })],
      plan: { add: [], change: [], remove: [], unchanged: ['2027-01-29'] },
    },
    {
      name: 'pay dates outside the range stay; a locked one outside it need not be listed',
      stored: [payDate('2026-12-24', '9-2026', { locked: true }), FEB, payDate('2027-04-30', '1-2027')],
      incoming: [incoming('2027-02-26', '11-2026')],
      plan: { add: [], change: [], remove: [], unchanged: ['2027-02-26'] },
    },
    {
      name: 'unlocked pay dates in the range the calendar leaves out go',
      stored: [JAN_LOCKED, FEB, MAR],
      incoming: [incoming('2027-01-29', '10-2026'), incoming('2027-03-31', '12-2026')],
      plan: { add: [], change: [], remove: ['2027-02-26'], unchanged: ['2027-01-29', '2027-03-31'] },
    },
    {
      name: 'two unlocked pay dates swap periods (a relabelling)',
      stored: [FEB, MAR],
      incoming: [incoming('2027-02-26', '12-2026'), incoming('2027-03-31', '11-2026')],
      plan: { add: [], change: [incoming('2027-02-26', '12-2026'), incoming('2027-03-31', '11-2026')], remove: [], unchanged: [] },
    },
    {
      name: 'an empty payroll takes the whole calendar',
      stored: [],
      incoming: [incoming('2027-03-31', '12-2026'), incoming('2027-02-26', '11-2026')],
      plan: { add: [incoming('2027-02-26', '11-2026'), incoming('2027-03-31', '12-2026')], change: [], remove: [], unchanged: [] },
    },
  ])('$name', ({ stored, incoming: newCalendar, plan }) => {
    expect(planCalendarReplacement({ stored, incoming: newCalendar, range: RANGE })).toEqual({ ok: true, plan });
  });
});

describe('planCalendarReplacement: refused whole', () => {
  it.each([
    {
      name: 'a locked pay date left out of its range',
      stored: [JAN_LOCKED, FEB],
      incoming: [incoming('2027-02-26', '11-2026')],
      refusals: [{ code: 'locked-pay-date-removed', payDate: '2027-01-29' }],
    },
    {
      name: 'a locked pay date moved to another day',
      stored: [JAN_LOCKED, FEB],
      incoming: [incoming('2027-01-28', '10-2026'), incoming('2027-02-26', '11-2026')],
      refusals: [{ code: 'locked-pay-date-moved', payDate: '2027-01-29', movedTo: '2027-01-28', payPeriod: '10-2026' }],
    },
    {
      name: 'a locked pay date moved into a range that does not cover it',
      stored: [payDate('2026-12-24', '9-2026', { locked: true })],
      incoming: [incoming('2027-01-04', '9-2026')],
      refusals: [{ code: 'locked-pay-date-moved', payDate: '2026-12-24', movedTo: '2027-01-04', payPeriod: '9-2026' }],
    },
    {
      name: "a locked pay date's cut-off altered",
      stored: [JAN_LOCKED],
      incoming: [incoming('2027-01-29', '10-2026', { payroll_cutoff_date: '2027-01-22' })],
      refusals: [{ code: 'locked-pay-date-altered', payDate: '2027-01-29', field: 'payroll_cutoff_date' }],
    },
    {
      name: "a locked pay date's pay period altered",
      stored: [JAN_LOCKED],
      incoming: [incoming('2027-01-29', '13-2026')],
      refusals: [{ code: 'locked-pay-date-altered', payDate: '2027-01-29', field: 'pay_period' }],
    },
    {
      name: 'a pay period held by an unlocked pay date outside the range',
      stored: [payDate('2027-04-30', '1-2027')],
      incoming: [incoming('2027-03-31', '1-2027')],
      refusals: [{ code: 'pay-period-taken', payDate: '2027-03-31', payPeriod: '1-2027', takenBy: '2027-04-30' }],
    },
    {
      name: 'a calendar naming a day or a period twice',
      stored: [],
      incoming: [incoming('2027-02-26', '11-2026'), incoming('2027-02-26', '12-2026'), incoming('2027-03-31', '11-2026')],
      refusals: [
        { code: 'duplicate-pay-date', payDate: '2027-02-26' },
        { code: 'duplicate-pay-period', payDate: '2027-03-31', payPeriod: '11-2026' },
      ],
    },
    {
      name: 'every locked pay date touched is named, not only the first',
      stored: [JAN_LOCKED, payDate('2027-02-26', '11-2026', { locked: true }), MAR],
      incoming: [incoming('2027-03-31', '12-2026')],
      refusals: [
        { code: 'locked-pay-date-removed', payDate: '2027-01-29' },
        { code: 'locked-pay-date-removed', payDate: '2027-02-26' },
      ],
    },
  ])('$name', ({ stored, incoming: newCalendar, refusals }) => {
    expect(planCalendarReplacement({ stored, incoming: newCalendar, range: RANGE })).toEqual({ ok: false, refusals });
  });
});
