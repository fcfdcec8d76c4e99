import { describe, expect, it } from 'vitest';
import { deductionContentHash, type DeductionContent } from '../../../src/cycle/deduction-records/deduction-content.ts';

const base: DeductionContent = {
  employeeId: '5b0c8a52-5c7e-4b43-9d6f-2f4f1c0f2a10',
  deductionAmount: 12_550,
  currency: 'GBP',
  leaver: false,
  requestedPayments: [
    {
      payment_information: {
        payment_reference: 'REF-1',
        payment_amount: 12_550,
        payment_account: { account_number: '41234978', sort_code: '04-00-04', account_holder_name: 'Collections Ltd' },
      },
    },
  ],
};

describe('deductionContentHash', () => {
  it('is a sha256 hex digest, the same for the same content', () => {
    expect(deductionContentHash(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(deductionContentHash({ ...base })).toBe(deductionContentHash(base));
  });

  it('ignores key order and the case of the employee id', () => {
    const reordered: DeductionContent = {
      ...base,
      employeeId: base.employeeId.toUpperCase(),
      requestedPayments: [
        {
          payment_information: {
            payment_account: { sort_code: '04-00-04', account_holder_name: 'Collections Ltd', account_number: '41234978' },
            payment_amount: 12_550,
            payment_reference: 'REF-1',
          },
        },
      ],
    };
    expect(deductionContentHash(reordered)).toBe(deductionContentHash(base));
  });

  it('changes with the amount, currency, leaver flag and requested payments', () => {
    const hash = deductionContentHash(base);
    expect(deductionContentHash({ ...base, deductionAmount: 12_551 })).not.toBe(hash);
    expect(deductionContentHash({ ...base, currency: 'EUR' })).not.toBe(hash);
    expect(deductionContentHash({ ...base, leaver: true })).not.toBe(hash);
    expect(deductionContentHash({ ...base, requestedPayments: [] })).not.toBe(hash);
  });
});
