import { describe, expect, it } from 'vitest';
import { checkNationalInsuranceNumber, identityUpdate, matchesKnownPerson, personIdentity, type StoredIdentity } from '../../../src/directory/payrolls/person-identity.ts';

// HMRC's rules for the prefix of a National Insurance number, written out here on their own (not
// read from the code under test): neither letter D, F, I, Q, U or V; the second not O; and seven
// prefixes whose letters pass that are not allocated.
const NOT_FIRST = ['D', 'F', 'I', 'Q', 'U', 'V'];
const NOT_SECOND = ['D', 'F', 'I', 'Q', 'U', 'V', 'O'];
const NOT_ALLOCATED = ['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'];
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'.split('');

const everyPrefix = ALPHABET.flatMap((first) =>
  ALPHABET.map((second) => {
    const prefix = `${first}${second}`;
    const lettersAllowed = !NOT_FIRST.includes(first) && !NOT_SECOND.includes(second);
    return { prefix, lettersAllowed, issued: lettersAllowed && !NOT_ALLOCATED.includes(prefix) };
  }),
);

describe('checkNationalInsuranceNumber', () => {
  it('covers all 676 prefix pairs, 373 of which HMRC issues', () => {
    expect(everyPrefix).toHaveLength(676);
    expect(everyPrefix.filter((p) => p.issued)).toHaveLength(20 * 19 - 7);
  });

  it.each(everyPrefix)('prefix $prefix: issued $issued', ({ prefix, lettersAllowed, issued }) => {
    const result = checkNationalInsuranceNumber(`${prefix}123456C`);
    if (issued) {
      expect(result).toEqual({ ok: true, value: `${prefix}123456C` });
      return;
    }
    expect(result.ok).toBe(false);
    const reason = result.ok ? '' : result.reason;
    expect(reason).toContain(`the prefix ${prefix}`);
    expect(reason).toContain(lettersAllowed ? 'is not allocated' : 'is never issued');
    if (NOT_FIRST.includes(prefix[0]!)) expect(reason).toContain(`${prefix[0]} is never the first letter`);
    if (NOT_SECOND.includes(prefix[1]!)) expect(reason).toContain(`${prefix[1]} is never the second letter`);
  });

  it.each(['A', 'B', 'C', 'D'])('accepts the suffix %s', (suffix) => {
    expect(checkNationalInsuranceNumber(`AB123456${suffix}`)).toEqual({ ok: true, value: `AB123456${suffix}` });
  });

  it.each(['E', 'F', 'M', 'Z', '1'])('refuses the suffix %s', (suffix) => {
    expect(checkNationalInsuranceNumber(`AB123456${suffix}`)).toEqual({ ok: false, reason: expect.stringContaining('a suffix letter A, B, C or D') });
  });

  it('accepts spaces and lower case, and gives the number normalised', () => {
    expect(checkNationalInsuranceNumber('ab123456c')).toEqual({ ok: true, value: 'AB123456C' });
    expect(checkNationalInsuranceNumber(' ab 12 34 56 c ')).toEqual({ ok: true, value: 'AB123456C' });
    expect(checkNationalInsuranceNumber('Ce 65\t43 21 a')).toEqual({ ok: true, value: 'CE654321A' });
  });

  it.each([
    ['QQ 12 34 56 C', ['the prefix QQ is never issued', 'Q is never the first letter', 'Q is never the second letter']],
    ['QQ1234', ['has 6 characters (spaces aside) where one has 9', 'the prefix QQ is never issued']],
    ['AB12345C', ['has 8 characters']],
    ['AB1234567C', ['has 10 characters']],
    ['AB12A456C', ['must be two prefix letters, six digits and a suffix letter A, B, C or D']],
    ['1B123456C', ['must be two prefix letters']],
    ['AB-12-34-56-C', ['has 13 characters']],
    ['ZZ123456C', ['the prefix ZZ is not allocated']],
    ['AO123456C', ['O is never the second letter']],
    ['', ['has 0 characters']],
  ])('refuses %j, saying what is wrong', (text, parts) => {
    const result = checkNationalInsuranceNumber(text);
    expect(result.ok).toBe(false);
    const reason = result.ok ? '' : result.reason;
    expect(reason.startsWith('is not a National Insurance number: ')).toBe(true);
    for (const part of parts) expect(reason).toContain(part);
  });
});

describe('identityUpdate', () => {
  const stored: StoredIdentity = { national_registration_number: 'AB123456C', date_of_birth: '1990-05-17' };

  it.each<[string, Parameters<typeof identityUpdate>[1], boolean, ReturnType<typeof identityUpdate>]>([
    ['nothing given: kept', {}, false, { changes: {}, conflicts: [] }],
    ['nulls given (empty cells): kept, never cleared', { national_registration_number: null, date_of_birth: null }, true, { changes: {}, conflicts: [] }],
    ['the same given: nothing to write', { ...stored }, true, { changes: {}, conflicts: [] }],
    ['another date, only this payroll employs them: corrected', { date_of_birth: '1990-05-18' }, false, { changes: { date_of_birth: '1990-05-18' }, conflicts: [] }],
    ['another date, another payroll employs them too: a conflict', { date_of_birth: '1990-05-18' }, true, { changes: {}, conflicts: ['date_of_birth'] }],
    [
      'another number and date, employed elsewhere: both conflicts',
      { national_registration_number: 'CE654321A', date_of_birth: '1990-05-18' },
      true,
      { changes: {}, conflicts: ['national_registration_number', 'date_of_birth'] },
    ],
    [
      'another number, only this payroll: corrected',
      { national_registration_number: 'CE654321A' },
      false,
      { changes: { national_registration_number: 'CE654321A' }, conflicts: [] },
    ],
  ])('%s', (_case, given, employedElsewhere, expected) => {
    expect(identityUpdate(stored, given, employedElsewhere)).toEqual(expected);
  });

  it('fills what the person lacks, whoever else employs them', () => {
    const empty: StoredIdentity = { national_registration_number: null, date_of_birth: null };
    expect(identityUpdate(empty, { ...stored }, true)).toEqual({ changes: stored, conflicts: [] });
  });
});

describe('matchesKnownPerson', () => {
  const identity = (familyName: string) => personIdentity({ national_registration_number: 'AB123456C', date_of_birth: '1988-03-14', family_name: familyName });
  const odonnell = { date_of_birth: '1988-03-14', family_names: ["O'Donnell", 'ODONNELL'] };

  it("matches O'Donnell, ODONNELL and o donnell alike: names are normalised for matching only", () => {
    for (const spelling of ["O'Donnell", 'ODONNELL', 'o donnell', 'O’DONNELL']) expect(matchesKnownPerson(odonnell, identity(spelling))).toBe(true);
  });

  it('matches a name any of the payrolls gives, and no other', () => {
    const renamed = { date_of_birth: '1988-03-14', family_names: ['Taylor', 'Shah-Patel'] };
    expect(matchesKnownPerson(renamed, identity('taylor'))).toBe(true);
    expect(matchesKnownPerson(renamed, identity('SHAH PATEL'))).toBe(true);
    expect(matchesKnownPerson(renamed, identity('Shah'))).toBe(false);
    expect(matchesKnownPerson({ ...renamed, date_of_birth: '1988-03-15' }, identity('taylor'))).toBe(false);
  });

  it('never matches without names, an empty name, or an unknown birth date', () => {
    expect(matchesKnownPerson({ date_of_birth: '1988-03-14', family_names: [] }, identity('Taylor'))).toBe(false);
    expect(matchesKnownPerson({ date_of_birth: '1988-03-14', family_names: ['', "'"] }, identity('Taylor'))).toBe(false);
    expect(matchesKnownPerson({ date_of_birth: null, family_names: ['Taylor'] }, identity('Taylor'))).toBe(false);
  });
});
