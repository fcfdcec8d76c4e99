import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Who an availability check asks about, normalised for comparison; a field the caller left out is
 * empty. All three are needed for a match: a national registration number alone is written on
 * payslips, letters and forms that many people see, so it proves nothing about the caller's right to
 * learn someone's employer and salary.
 */
export interface PersonIdentity {
  nationalRegistrationNumber: string;
  dateOfBirth: string;
  familyName: string;
}

/** National Insurance numbers are written with and without spaces, in either case. */
export function normaliseNationalRegistrationNumber(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

// Latin letters that Unicode does not decompose into a base letter and a mark.
const UNDECOMPOSED_LETTERS: Readonly<Record<string, string>> = {
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
};

/**
 * A family name as payroll and a biller's form may each spell it: case, accents, spaces anywhere,
 * hyphens, apostrophes and full stops do not count ("O'Brien-Núñez" = "obrien nunez"). Accents are
 * dropped by decomposing (NFKD) and removing the marks; ß, æ, ø, ł and the like are spelt out; case is
 * folded through upper case so ß becomes ss. Only letters and digits remain. A name with none left
 * is empty, and an empty name matches nothing.
 */
export function normaliseFamilyName(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toUpperCase()
    .toLowerCase()
    .replace(/[æœøłđðþ]/g, (letter) => UNDECOMPOSED_LETTERS[letter]!)
    .replace(/[^\p{L}\p{N}]/gu, '');
}

export function personIdentity(fields: {
  national_registration_number?: string | undefined;
  date_of_birth?: string | undefined;
  family_name?: string | undefined;
}): PersonIdentity {
  return {
    nationalRegistrationNumber: normaliseNationalRegistrationNumber(fields.national_registration_number ?? ''),
    dateOfBirth: fields.date_of_birth ?? '',
    familyName: normaliseFamilyName(fields.family_name ?? ''),
  };
}

/** Whether the check carries all three identifiers; without them it can only be not_found. */
export function isCompleteIdentity(identity: PersonIdentity): boolean {
  return identity.nationalRegistrationNumber !== '' && identity.dateOfBirth !== '' && identity.familyName !== '';
}

/** What the directory holds about a candidate whose national registration number matched. */
export interface DirectoryPerson {
  date_of_birth: string | null;
  family_name: string;
}

function sameInConstantTime(a: string, b: string): boolean {
  // Equal-length digests: timingSafeEqual then takes as long whatever the inputs and wherever they differ.
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * The matching rule, beyond the national registration number the candidate was found by: the date of
 * birth and the normalised family name must both be equal. Both comparisons always run, in constant
 * time, and are combined without short-circuiting, so how long a check takes does not tell a caller
 * which of the two was right. What either side does not know (an identifier left out of the check, a
 * date of birth or name missing from the directory) never matches.
 */
export function matchesPerson(candidate: DirectoryPerson, identity: PersonIdentity): boolean {
  const storedFamilyName = normaliseFamilyName(candidate.family_name);
  const bothKnown = isCompleteIdentity(identity) && candidate.date_of_birth !== null && storedFamilyName !== '';
  const sameBirthDate = sameInConstantTime(candidate.date_of_birth ?? '', identity.dateOfBirth);
  const sameFamilyName = sameInConstantTime(storedFamilyName, identity.familyName);
  return (Number(bothKnown) & Number(sameBirthDate) & Number(sameFamilyName)) === 1;
}

/** Stands in when no candidate was found, so a check does the same work whether the number exists or not. */
export const NOBODY: DirectoryPerson = { date_of_birth: null, family_name: '' };
