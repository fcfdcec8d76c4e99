import { describe, expect, it } from 'vitest';
import { toDeductionDataResponse } from '../../../src/cycle/deduction-data/deduction-data-resource.ts';
import { employeeRequestedPayments, requestedPaymentItem, type SnapshotRequestedPayment } from '../../../src/cycle/instructions/requested-payments.ts';

const remittance: SnapshotRequestedPayment = {
  payment_reference: 'SDR261127P00000017',
  payment_amount: 16_000,
  currency: 'GBP',
  account_number: '41234978',
  sort_code: '04-00-04',
  account_holder_name: 'Salary Deductions Collections Ltd',
};
const account = { account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Salary Deductions Collections Ltd' };

describe('requestedPaymentItem', () => {
  it('writes a requested payment in the interface shape, its amount in major units', () => {
    expect(requestedPaymentItem(remittance)).toEqual({ payment_information: { payment_reference: 'SDR261127P00000017', payment_amount: 160, payment_account: account } });
    expect(requestedPaymentItem({ ...remittance, currency: 'JPY', payment_amount: 1_234 }).payment_information.payment_amount).toBe(1_234);
    expect(requestedPaymentItem({ ...remittance, currency: 'BHD', payment_amount: 1_234 }).payment_information.payment_amount).toBe(1.234);
  });

  it('is what the data response shows', () => {
    const response = toDeductionDataResponse(
      { id: crypto.randomUUID(), payroll_id: crypto.randomUUID(), pay_date: '2026-11-27', total_amount: 16_000, employee_count: 1, currency: 'GBP' },
      [{ employee_id: 'e1', requested_amount: 16_000, currency: 'GBP', payment_reference: 'SD00000001' }],
      [remittance],
      'Europe/London',
    );
    expect(response.requested_payments).toEqual([requestedPaymentItem(remittance)]);
  });
});

describe("employeeRequestedPayments: an employee's part of the payments a snapshot asks for", () => {
  it("names the snapshot's payment, reference and account, for the employee's own amount in major units", () => {
    expect(employeeRequestedPayments({ requested_amount: 12_999, currency: 'GBP' }, [remittance])).toEqual([
      { payment_information: { payment_reference: 'SDR261127P00000017', payment_amount: 129.99, payment_account: account } },
    ]);
  });

  it('gives an employee the snapshot deducts nothing from no payments', () => {
    expect(employeeRequestedPayments(null, [remittance])).toEqual([]);
    expect(employeeRequestedPayments({ requested_amount: 0, currency: 'GBP' }, [remittance])).toEqual([]);
    expect(employeeRequestedPayments({ requested_amount: 100, currency: 'GBP' }, [])).toEqual([]);
  });

  it('adds up, over the employees of a snapshot, to its payment', () => {
    const lines = [12_999, 3_001, 1, 2_999].map((requested_amount) => ({ requested_amount, currency: 'GBP' }));
    const parts = lines.flatMap((line) => employeeRequestedPayments(line, [{ ...remittance, payment_amount: 19_000 }]));
    expect(new Set(parts.map((part) => part.payment_information.payment_reference))).toEqual(new Set(['SDR261127P00000017']));
    expect(parts.reduce((sum, part) => sum + Math.round(part.payment_information.payment_amount * 100), 0)).toBe(19_000);
  });

  it('refuses to guess which of several payments carries an employee, or to mix currencies', () => {
    const second = { ...remittance, payment_reference: 'SDR261127P00000018' };
    expect(() => employeeRequestedPayments({ requested_amount: 100, currency: 'GBP' }, [remittance, second])).toThrow(/2 payments .*SDR261127P00000017, SDR261127P00000018/);
    expect(() => employeeRequestedPayments({ requested_amount: 100, currency: 'EUR' }, [remittance])).toThrow(/EUR .* GBP/);
  });
});
