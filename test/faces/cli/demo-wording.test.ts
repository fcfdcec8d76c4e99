import { describe, expect, it } from 'vitest';
import type { RemittanceStatus } from '../../../src/platform/db/tables.ts';
import { payrollLabel, remittanceInWords } from '../../../src/faces/cli/demo/demo-wording.ts';
import { remittanceStatus } from '../../../src/settlement/cash/remittance-status.ts';
import { moneyInWordsFaults } from '../../support/money-in-words.ts';

// The demo says what a remittance's status says, in a finance clerk's words: a remittance not yet due
// is never called late.

const DUE = '2027-01-04';
const base = { currency: 'GBP', due_date: DUE, expected: 385_755, received: 0, shortfall: 0 };

/** One remittance of each status, with the status remittanceStatus gives its amounts and dates. */
const examples: Record<RemittanceStatus, typeof base & { today: string }> = {
  expected: { ...base, today: '2027-01-04' },
  late: { ...base, today: '2027-01-05' },
  short: { ...base, received: 300_000, today: '2027-01-05' },
  received: { ...base, received: 385_755, today: '2027-01-05' },
  over: { ...base, received: 400_000, today: '2027-01-05' },
  shortfall: { ...base, received: 100_000, shortfall: 5_000, today: '2027-01-05' },
};

describe('remittanceInWords', () => {
  it.each(Object.entries(examples))('words a %s remittance by its status', (status, example) => {
    const derived = remittanceStatus({
      expected: example.expected,
      received: example.received,
      dueDate: example.due_date,
      today: example.today,
      shortfall: example.shortfall,
    });
    expect(derived).toBe(status);
    const words = remittanceInWords({ ...example, status: derived });
    expect(moneyInWordsFaults(words)).toEqual([]);
    expect(words.includes('late')).toBe(status === 'late');
    expect(words.startsWith(`${status}:`)).toBe(true);
  });

  it('says what an expected remittance is and when it is due, and a late one what was due', () => {
    expect(remittanceInWords({ ...base, status: 'expected' })).toBe('expected: £3,857.55 due by 2027-01-04');
    expect(remittanceInWords({ ...base, status: 'late' })).toBe('late: £3,857.55 was due by 2027-01-04');
    expect(remittanceInWords({ ...base, received: 300_000, status: 'short' })).toBe('short: £3,000.00 of £3,857.55 received, £857.55 still owed');
    expect(remittanceInWords({ ...base, received: 1_500, expected: 1_000, currency: 'JPY', status: 'over' })).toBe('over: 500 JPY more than the 1,000 JPY expected');
  });
});

describe('payrollLabel', () => {
  it.each([
    ['Severn Valley Distribution Ltd', 'Severn Valley Distribution Ltd four-weekly payroll', 'four-weekly payroll'],
    ['Acme Ltd', 'Acme monthly', 'Acme monthly'],
    ['Acme Ltd', 'Acme Ltd', 'Acme Ltd'],
  ])('names %s’s payroll %s as %s', (employer, payroll, label) => expect(payrollLabel(employer, payroll)).toBe(label));
});
