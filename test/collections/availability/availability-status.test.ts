import { describe, expect, it } from 'vitest';
import {
  availabilityStatus,
  bestAvailabilityStatus,
  canCarryDeduction,
  disclosedSalary,
  type EmploymentStanding,
} from '../../../src/collections/availability/availability-status.ts';
import { isCompleteIdentity, matchesPerson, NOBODY, normaliseFamilyName, personIdentity } from '../../../src/directory/payrolls/person-identity.ts';

const standing = (overrides: Partial<EmploymentStanding> = {}): EmploymentStanding => ({
  employmentStatus: 'active',
  employerOptIn: 'opted_in',
  currency: 'GBP',
  ...overrides,
});

describe('availabilityStatus', () => {
  it('is not_found when no employee matched, whatever else is known', () => {
    expect(availabilityStatus({ employeeFound: false, employments: [standing()], currency: null })).toBe('not_found');
  });

  it('is confirmed when one active employment has an opted-in employer', () => {
    const employments = [standing({ employmentStatus: 'leaver' }), standing()];
    expect(availabilityStatus({ employeeFound: true, employments, currency: null })).toBe('confirmed');
  });

  it('prefers an opted-in employer over a pending one', () => {
    const employments = [standing({ employerOptIn: 'pending' }), standing()];
    expect(availabilityStatus({ employeeFound: true, employments, currency: null })).toBe('confirmed');
  });

  it('is pending_employer_opt_in when the best active employment waits for its employer', () => {
    const employments = [standing({ employerOptIn: 'pending' }), standing({ employerOptIn: 'opted_out' })];
    expect(availabilityStatus({ employeeFound: true, employments, currency: null })).toBe('pending_employer_opt_in');
  });

  it.each([
    ['a leaver', standing({ employmentStatus: 'leaver' })],
    ['an unknown employment status', standing({ employmentStatus: 'unknown' })],
    ['an opted-out employer', standing({ employerOptIn: 'opted_out' })],
    ['a leaver at a pending employer', standing({ employmentStatus: 'leaver', employerOptIn: 'pending' })],
  ])('is not_eligible for %s', (_, employment) => {
    expect(availabilityStatus({ employeeFound: true, employments: [employment], currency: null })).toBe('not_eligible');
  });

  it('is not_eligible for a known employee without employments', () => {
    expect(availabilityStatus({ employeeFound: true, employments: [], currency: null })).toBe('not_eligible');
  });

  it('counts only employments in the requested currency when one is named', () => {
    const employments = [standing({ currency: 'GBP' })];
    expect(availabilityStatus({ employeeFound: true, employments, currency: 'EUR' })).toBe('not_eligible');
    expect(availabilityStatus({ employeeFound: true, employments, currency: 'GBP' })).toBe('confirmed');
    const mixed = [standing({ currency: 'GBP' }), standing({ currency: 'EUR', employerOptIn: 'pending' })];
    expect(availabilityStatus({ employeeFound: true, employments: mixed, currency: 'EUR' })).toBe('pending_employer_opt_in');
  });
});

describe('bestAvailabilityStatus', () => {
  it('ranks confirmed > pending_employer_opt_in > not_eligible > not_found', () => {
    expect(bestAvailabilityStatus([])).toBe('not_found');
    expect(bestAvailabilityStatus(['not_found', 'not_eligible'])).toBe('not_eligible');
    expect(bestAvailabilityStatus(['not_eligible', 'pending_employer_opt_in', 'not_found'])).toBe('pending_employer_opt_in');
    expect(bestAvailabilityStatus(['pending_employer_opt_in', 'confirmed', 'not_eligible'])).toBe('confirmed');
  });
});

describe('canCarryDeduction and disclosedSalary', () => {
  const employment = (overrides: Partial<EmploymentStanding> = {}) => ({ ...standing(overrides), annualisedSalary: 3_600_000 });

  it('shows the salary of an active employment at an employer that has not opted out, in the wanted currency', () => {
    expect(disclosedSalary(employment(), null)).toBe(3_600_000);
    expect(disclosedSalary(employment({ employerOptIn: 'pending' }), 'GBP')).toBe(3_600_000);
    expect(canCarryDeduction(standing(), 'GBP')).toBe(true);
  });

  it.each([
    ['a leaver', employment({ employmentStatus: 'leaver' }), null],
    ['an unknown employment status', employment({ employmentStatus: 'unknown' }), null],
    ['an opted-out employer', employment({ employerOptIn: 'opted_out' }), null],
    ['a payroll in another currency', employment({ currency: 'GBP' }), 'EUR'],
  ] as const)('withholds it (0) for %s', (_, e, currency) => {
    expect(canCarryDeduction(e, currency)).toBe(false);
    expect(disclosedSalary(e, currency)).toBe(0);
  });

  it('shows 0 for a salary payroll never gave', () => {
    expect(disclosedSalary({ ...standing(), annualisedSalary: null }, null)).toBe(0);
  });
});

describe('personIdentity', () => {
  it('normalises the national registration number (spaces, case) and the family name', () => {
    expect(personIdentity({ national_registration_number: ' qq 12 34 56 c ', date_of_birth: '1988-03-14', family_name: " O'Brien-Núñez " })).toEqual({
      nationalRegistrationNumber: 'QQ123456C',
      dateOfBirth: '1988-03-14',
      familyName: 'obriennunez',
    });
  });
});

describe('normaliseFamilyName', () => {
  it.each([
    ['TAYLOR', 'taylor'],
    ['  van der  Berg ', 'vanderberg'],
    ['Smith-Jones', 'smithjones'],
    ['Smith – Jones', 'smithjones'],
    ["O'Neill", 'oneill'],
    ['O’Neill', 'oneill'],
    ['Zoë Brontë', 'zoebronte'],
    ['Müller', 'muller'],
    ['Straße', 'strasse'],
    ['Łukasz Wałęsa', 'lukaszwalesa'],
    ['Søren Ærø', 'sorenaero'],
    ['St. John', 'stjohn'],
    ['Ｔａｙｌｏｒ', 'taylor'],
  ])('%s -> %s', (name, normalised) => {
    expect(normaliseFamilyName(name)).toBe(normalised);
  });

  it('leaves nothing of a name without letters or digits', () => {
    expect(normaliseFamilyName(" -' . ")).toBe('');
  });
});

describe('matchesPerson', () => {
  const identity = personIdentity({ national_registration_number: 'QQ123456C', date_of_birth: '1988-03-14', family_name: 'taylor' });

  it('matches when date of birth and normalised family name are both equal', () => {
    expect(matchesPerson({ date_of_birth: '1988-03-14', family_name: 'Taylor' }, identity)).toBe(true);
    expect(matchesPerson({ date_of_birth: '1988-03-14', family_name: ' TAYLOR ' }, identity)).toBe(true);
  });

  it('does not match on one of the two alone', () => {
    expect(matchesPerson({ date_of_birth: '1988-03-15', family_name: 'Taylor' }, identity)).toBe(false);
    expect(matchesPerson({ date_of_birth: '1988-03-14', family_name: 'Tailor' }, identity)).toBe(false);
  });

  it('never matches a check that left an identifier out', () => {
    const stored = { date_of_birth: '1988-03-14', family_name: 'Taylor' };
    const withoutBirthDate = personIdentity({ national_registration_number: 'QQ123456C', family_name: 'Taylor' });
    const withoutName = personIdentity({ national_registration_number: 'QQ123456C', date_of_birth: '1988-03-14' });
    const withoutNumber = personIdentity({ date_of_birth: '1988-03-14', family_name: 'Taylor' });
    for (const partial of [withoutBirthDate, withoutName, withoutNumber]) {
      expect(isCompleteIdentity(partial)).toBe(false);
      expect(matchesPerson(stored, partial)).toBe(false);
    }
    expect(isCompleteIdentity(identity)).toBe(true);
  });

  it('never matches what the directory does not know, nor an empty name', () => {
    expect(matchesPerson({ date_of_birth: null, family_name: 'Taylor' }, identity)).toBe(false);
    expect(matchesPerson({ date_of_birth: '1988-03-14', family_name: '' }, identity)).toBe(false);
    const emptyName = personIdentity({ national_registration_number: 'QQ123456C', date_of_birth: '1988-03-14', family_name: "'" });
    expect(matchesPerson({ date_of_birth: '1988-03-14', family_name: '-' }, emptyName)).toBe(false);
    expect(matchesPerson(NOBODY, identity)).toBe(false);
  });
});
