import { describe, expect, it } from 'vitest';
import { bankAccountObject, bankAccountViolations, type UkBankAccount } from '../../src/payouts/bank-account-details.ts';

// One rule for every account money is paid into: the collection account employers remit to, and
// billers' beneficiary accounts. Each case changes one field of a good account.

const good: UkBankAccount = { sort_code: '20-00-00', account_number: '31926819', account_holder_name: 'Acme Lending Ltd' };

const cases: Array<[string, Partial<UkBankAccount>, string[]]> = [
  ['a good account', {}, []],
  ['sort code of other digits', { sort_code: '04-00-04' }, []],
  ['sort code without hyphens', { sort_code: '200000' }, ['sort_code']],
  ['sort code with spaces', { sort_code: '20 00 00' }, ['sort_code']],
  ['sort code too short', { sort_code: '20-00-0' }, ['sort_code']],
  ['sort code too long', { sort_code: '20-00-000' }, ['sort_code']],
  ['sort code with letters', { sort_code: '2O-00-00' }, ['sort_code']],
  ['sort code with a trailing newline', { sort_code: '20-00-00\n' }, ['sort_code']],
  ['sort code empty', { sort_code: '' }, ['sort_code']],
  ['sort code of full-width digits', { sort_code: '２０-００-００' }, ['sort_code']],
  ['account number with leading zeros', { account_number: '00012345' }, []],
  ['account number of 7 digits', { account_number: '1234567' }, ['account_number']],
  ['account number of 9 digits', { account_number: '123456789' }, ['account_number']],
  ['account number of 6 digits', { account_number: '123456' }, ['account_number']],
  ['account number of 10 digits', { account_number: '1234567890' }, ['account_number']],
  ['account number with a space', { account_number: '3192 6819' }, ['account_number']],
  ['account number with a hyphen', { account_number: '3192-681' }, ['account_number']],
  ['account number with a letter', { account_number: '3192681O' }, ['account_number']],
  ['account number empty', { account_number: '' }, ['account_number']],
  ['holder name of one character', { account_holder_name: 'A' }, []],
  ['holder name of 140 characters', { account_holder_name: 'A'.repeat(140) }, []],
  ['holder name of 141 characters', { account_holder_name: 'A'.repeat(141) }, ['account_holder_name']],
  ['holder name padded to 141 characters, 140 without the padding', { account_holder_name: ` ${'A'.repeat(140)}` }, []],
  ['holder name blank', { account_holder_name: '   ' }, ['account_holder_name']],
  ['holder name empty', { account_holder_name: '' }, ['account_holder_name']],
  ['every field wrong', { sort_code: '1', account_number: '2', account_holder_name: '' }, ['sort_code', 'account_number', 'account_holder_name']],
];

describe('bankAccountViolations', () => {
  it.each(cases)('%s', (_name, change, fields) => {
    const violations = bankAccountViolations({ ...good, ...change });
    expect(violations.map((violation) => violation.field)).toEqual(fields);
    for (const violation of violations) expect(violation.detail).not.toBe('');
  });

  it('says what is expected', () => {
    expect(bankAccountViolations({ sort_code: '200000', account_number: '1', account_holder_name: ' ' })).toEqual([
      { field: 'sort_code', detail: 'must be a sort code written NN-NN-NN, e.g. 20-00-00' },
      { field: 'account_number', detail: 'must be exactly 8 digits' },
      { field: 'account_holder_name', detail: 'must not be blank' },
    ]);
  });
});

describe('bankAccountObject', () => {
  const schema = bankAccountObject({});

  it.each(cases)('applies the rule to %s, each violation at its field', (_name, change, fields) => {
    const result = schema.safeParse({ ...good, ...change });
    expect(result.success).toBe(fields.length === 0);
    if (!result.success) expect(result.error.issues.map((issue) => issue.path.join('/'))).toEqual(fields);
  });

  it('keeps the holder name trimmed, and refuses fields it does not know', () => {
    expect(schema.parse({ ...good, account_holder_name: '  Acme Lending Ltd ' }).account_holder_name).toBe('Acme Lending Ltd');
    expect(schema.safeParse({ ...good, iban: 'GB00' }).success).toBe(false);
  });
});
