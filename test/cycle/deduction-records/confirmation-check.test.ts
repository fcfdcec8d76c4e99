import { describe, expect, it } from 'vitest';
import { checkConfirmation, MAX_LISTED_ERRORS } from '../../../src/cycle/deduction-records/confirmation-check.ts';
import type { ConfirmationSubmission } from '../../../src/cycle/deduction-records/confirmation-resource.ts';

const employee = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const expected = { payPeriod: '8-2026', currency: 'GBP' };

function submission(lines: Array<[number, number]>, total: number, overrides: Partial<ConfirmationSubmission> = {}): ConfirmationSubmission {
  return {
    deduction_data_id: employee(999),
    pay_period: '8-2026',
    currency: 'GBP',
    total_amount: total,
    deductions: lines.map(([n, amount]) => ({ employee_id: employee(n), deducted_amount: amount, leaver: false })),
    ...overrides,
  };
}

describe('checkConfirmation', () => {
  it('accepts lines whose sum is the total exactly, in minor units (no float drift)', () => {
    // 0.1 + 0.2 !== 0.3 in floats; in pence it is 10 + 20 === 30.
    expect(
      checkConfirmation(
        submission(
          [
            [1, 0.1],
            [2, 0.2],
          ],
          0.3,
        ),
        expected,
      ),
    ).toEqual({ kind: 'valid', amounts: [10, 20], total: 30 });
  });

  it('reports a total that is not the sum, with both figures', () => {
    expect(
      checkConfirmation(
        submission(
          [
            [1, 125.5],
            [2, 30],
          ],
          155.49,
        ),
        expected,
      ),
    ).toEqual({
      kind: 'total-mismatch',
      statedTotal: 15_549,
      linesTotal: 15_550,
    });
  });

  it('reports lines adding up beyond any statable total without losing exactness', () => {
    const big = 9_999_999_999_999.99;
    const unbounded = { ...expected, limits: { maxPerEmployee: 999_999_999_999_999, maxPerPayDate: 999_999_999_999_999 } };
    expect(
      checkConfirmation(
        submission(
          [
            [1, big],
            [2, big],
          ],
          big,
        ),
        unbounded,
      ),
    ).toEqual({
      kind: 'total-mismatch',
      statedTotal: 999_999_999_999_999,
      linesTotal: null,
    });
  });

  it('refuses every line over the per-employee reporting limit, the limit itself allowed', () => {
    const limits = { maxPerEmployee: 1_000, maxPerPayDate: 1_000_000 };
    expect(
      checkConfirmation(
        submission(
          [
            [1, 10],
            [2, 10],
          ],
          20,
        ),
        { ...expected, limits },
      ).kind,
    ).toBe('valid');
    const check = checkConfirmation(
      submission(
        [
          [1, 10],
          [2, 10.01],
          [3, 100],
        ],
        120.01,
      ),
      { ...expected, limits },
    );
    expect(check).toMatchObject({ kind: 'over-limit', errorCount: 2 });
    if (check.kind !== 'over-limit') return;
    expect(check.errors.map((error) => error.pointer)).toEqual(['/confirmation/deductions/1/deducted_amount', '/confirmation/deductions/2/deducted_amount']);
    expect(check.errors[0]!.detail).toBe('must be at most £10.00 (MAX_REPORTED_DEDUCTION_MINOR), got £10.01');
  });

  it('uses the configured defaults when given no limits: GBP 10,000,000.00 a line', () => {
    expect(checkConfirmation(submission([[1, 10_000_000]], 10_000_000), expected).kind).toBe('valid');
    expect(checkConfirmation(submission([[1, 10_000_000.01]], 10_000_000.01), expected).kind).toBe('over-limit');
  });

  it('points at every invalid field: pay period, duplicates, decimals', () => {
    const check = checkConfirmation(
      submission(
        [
          [1, 1],
          [2, 1.005],
          [1, 2],
        ],
        4.005,
        { pay_period: '9-2026' },
      ),
      expected,
    );
    expect(check.kind).toBe('invalid');
    if (check.kind !== 'invalid') return;
    expect(check.errors.map((error) => error.pointer)).toEqual([
      '/confirmation/pay_period',
      '/confirmation/deductions/1/deducted_amount',
      '/confirmation/deductions/2/employee_id',
      '/confirmation/total_amount',
    ]);
    expect(check.errors[2]!.detail).toContain('line 0');
  });

  it('treats employee ids case-insensitively when looking for duplicates', () => {
    const check = checkConfirmation(
      {
        ...submission([[1, 1]], 2),
        deductions: [
          { employee_id: employee(1), deducted_amount: 1, leaver: false },
          { employee_id: employee(1).toUpperCase(), deducted_amount: 1, leaver: false },
        ],
      },
      expected,
    );
    expect(check).toMatchObject({ kind: 'invalid', errors: [{ pointer: '/confirmation/deductions/1/employee_id' }] });
  });

  it('reports a currency other than the payroll’s and does not judge decimals in it', () => {
    const check = checkConfirmation(submission([[1, 1.5]], 1.5, { currency: 'JPY' }), expected);
    expect(check).toEqual({
      kind: 'invalid',
      errorCount: 1,
      errors: [{ pointer: '/confirmation/currency', detail: expect.stringContaining('GBP') }],
    });
  });

  it('lists at most MAX_LISTED_ERRORS errors but counts them all', () => {
    const lines: Array<[number, number]> = Array.from({ length: 500 }, (_, i) => [i, 0.001]);
    const check = checkConfirmation(submission(lines, 0), expected);
    expect(check).toMatchObject({ kind: 'invalid', errorCount: 500 });
    if (check.kind === 'invalid') expect(check.errors).toHaveLength(MAX_LISTED_ERRORS);
  });
});
