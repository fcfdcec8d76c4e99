import { describe, expect, it } from 'vitest';
import {
  availabilityStatus,
  bestAvailabilityStatus,
  type EmploymentStanding,
} from '../../src/availability/availability-status.ts';
import { personIdentity } from '../../src/availability/person-identity.ts';

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

describe('personIdentity', () => {
  it('identifies by national registration number alone, normalised', () => {
    expect(personIdentity({ national_registration_number: ' qq 12 34 56 c ', family_name: 'Other' })).toEqual({
      by: 'national_registration_number',
      nationalRegistrationNumber: 'QQ123456C',
    });
  });

  it('otherwise needs family name and date of birth, with the postal code normalised when given', () => {
    expect(personIdentity({ family_name: 'Taylor', date_of_birth: '1988-03-14', postal_code: 'sw1a 1aa' })).toEqual({
      by: 'name_and_birth_date',
      familyName: 'Taylor',
      dateOfBirth: '1988-03-14',
      postalCode: 'SW1A1AA',
    });
    expect(personIdentity({ family_name: 'Taylor', date_of_birth: '1988-03-14' })).toMatchObject({ postalCode: null });
  });

  it('identifies nobody from less', () => {
    expect(personIdentity({ family_name: 'Taylor' })).toBeNull();
    expect(personIdentity({ date_of_birth: '1988-03-14', postal_code: 'SW1A 1AA' })).toBeNull();
    expect(personIdentity({ national_registration_number: '   ', family_name: 'Taylor' })).toBeNull();
  });
});
