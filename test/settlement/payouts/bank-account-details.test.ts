import { describe, expect, it } from 'vitest';
import { bankAccountObject, bankAccountViolations, type UkBankAccount } from '../../../src/settlement/payouts/bank-account-details.ts';

// One rule for every account money is paid into: the collection account employers remit to, and
// billers' beneficiary accounts. Each case changes one field of a good account (or the pair, for the
// modulus check).

const good: UkBankAccount = { sort_code: '60-16-13', account_number: '31926819', account_holder_name: 'Acme Lending Ltd' };

const cases: Array<[string, Partial<UkBankAccount>, string[]]> = [
  ['a good account', {}, []],
  ['sort code of other digits', { sort_code: '60-16-14' }, []],
  ['sort code without hyphens', { sort_code: '200000' }, ['sort_code']],
  ['sort code with spaces', { sort_code: '20 00 00' }, ['sort_code']],
  ['sort code too short', { sort_code: '20-00-0' }, ['sort_code']],
  ['sort code too long', { sort_code: '20-00-000' }, ['sort_code']],
  ['sort code with letters', { sort_code: '2O-00-00' }, ['sort_code']],
  ['sort code with a trailing newline', { sort_code: '20-00-00\n' }, ['sort_code']],
  ['sort code empty', { sort_code: '' }, ['sort_code']],
  ['sort code of full-width digits', { sort_code: '２０-００-００' }, ['sort_code']],
  ['account number with leading zeros', { account_number: '00000019' }, []],
  ['account number one digit off (fails the modulus check)', { account_number: '31926818' }, ['account_number']],
  ['account number with two digits swapped (fails the modulus check)', { account_number: '39126819' }, ['account_number']],
  ['account number of another sort code (fails the modulus check)', { sort_code: '20-00-00' }, ['account_number']],
  ['modulus 10 worked example', { sort_code: '08-99-99', account_number: '66374958' }, []],
  ['modulus 11 worked example', { sort_code: '10-79-99', account_number: '88837491' }, []],
  ['modulus 11 and double alternate worked example', { sort_code: '20-29-59', account_number: '63748472' }, []],
  ['exception 5 worked example', { sort_code: '93-86-11', account_number: '07806039' }, []],
  ['modulus 10 worked example mistyped', { sort_code: '08-99-99', account_number: '66374959' }, ['account_number']],
  ['sort code without modulus weights (presumed valid)', { sort_code: '10-20-30', account_number: '12345678' }, []],
  ['account number of 7 digits', { account_number: '1234567' }, ['account_number']],
  ['account number of 9 digits', { account_number: '123456789' }, ['account_number']],
  ['account number of 6 digits', { account_number: '123456' }, ['account_number']],
  ['account number of 10 digits', { account_number: '1234567890' }, ['account_number']],
  ['account number with a space', { account_number: '3192 6819' }, ['account_number']],
  ['account number with a hyphen', { account_number: '3192-681' }, ['account_number']],
  ['account number with a letter', { account_number: '3192681O' }, ['account_number']],
  ['account number empty', { account_number: '' }, ['account_number']],
  ['holder name of two characters', { account_holder_name: 'AB' }, []],
  ['holder name of one character', { account_holder_name: 'A' }, ['account_holder_name']],
  ['holder name of 70 characters', { account_holder_name: 'A'.repeat(70) }, []],
  ['holder name of 71 characters', { account_holder_name: 'A'.repeat(71) }, ['account_holder_name']],
  ['holder name of 68 characters, 71 with & spelt "and"', { account_holder_name: `${'A'.repeat(33)}&${'B'.repeat(33)}` }, ['account_holder_name']],
  ['holder name of 141 characters', { account_holder_name: 'A'.repeat(141) }, ['account_holder_name']],
  ['holder name padded to 71 characters, 70 without the padding', { account_holder_name: ` ${'A'.repeat(70)}` }, []],
  ['holder name with accents and an ampersand', { account_holder_name: 'Müller & Söhne GmbH' }, []],
  ['holder name in Cyrillic', { account_holder_name: 'Иванов Сергей' }, []],
  ['holder name in Greek', { account_holder_name: 'Παπαδόπουλος' }, []],
  ['holder name in CJK', { account_holder_name: '北京银行' }, ['account_holder_name']],
  ['holder name of emoji', { account_holder_name: '😀🏦' }, ['account_holder_name']],
  ['holder name of punctuation', { account_holder_name: '& - +' }, ['account_holder_name']],
  ['holder name in CJK with a Latin part', { account_holder_name: '北京银行 (UK) Ltd' }, []],
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
      { field: 'sort_code', detail: 'must be a sort code written NN-NN-NN, e.g. 60-16-13' },
      { field: 'account_number', detail: 'must be exactly 8 digits' },
      { field: 'account_holder_name', detail: 'must not be blank' },
    ]);
    expect(bankAccountViolations({ sort_code: '08-99-99', account_number: '66374959', account_holder_name: '北京银行' })).toEqual([
      { field: 'account_number', detail: 'fails the Vocalink modulus check for sort code 08-99-99: check both for a mistyped or swapped digit' },
      {
        field: 'account_holder_name',
        detail:
          'has no character a UK payment file can carry, and a name needs at least 2 letters or digits there: give the name the bank holds the account in (Latin, Greek or Cyrillic letters)',
      },
    ]);
    expect(bankAccountViolations({ ...good, account_holder_name: 'Société Générale & Partners Lending Limited, trading as a name far too long' })).toEqual([
      {
        field: 'account_holder_name',
        detail: 'is 77 characters as a payment file writes it, over the 70 a pain.001 name allows: shorten it as the bank holds it (e.g. Ltd for Limited)',
      },
    ]);
  });

  it('checks the modulus only of a sort code and account number that are both well written', () => {
    expect(bankAccountViolations({ ...good, sort_code: '20-00-0' }).map((violation) => violation.field)).toEqual(['sort_code']);
    expect(bankAccountViolations({ ...good, account_number: '3192681' }).map((violation) => violation.detail)).toEqual(['must be exactly 8 digits']);
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
    expect(schema.parse({ ...good, account_holder_name: 'Иванов' }).account_holder_name).toBe('Иванов');
    expect(schema.safeParse({ ...good, iban: 'GB00' }).success).toBe(false);
  });
});
