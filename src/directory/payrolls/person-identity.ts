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

/** Letters HMRC never uses as the first letter of a National Insurance number's prefix. */
export const NEVER_FIRST_PREFIX_LETTERS = 'DFIQUV';
/** Letters HMRC never uses as the second letter of the prefix. */
export const NEVER_SECOND_PREFIX_LETTERS = 'DFIOQUV';
/** Prefixes whose letters are allowed but which HMRC does not allocate. */
export const UNALLOCATED_PREFIXES: readonly string[] = ['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'];

const NATIONAL_INSURANCE_NUMBER = /^[A-Z]{2}[0-9]{6}[A-D]$/;
const LAYOUT = 'two prefix letters, six digits and a suffix letter A, B, C or D, as in AB 12 34 56 C';

export type NationalInsuranceNumberCheck = { ok: true; value: string } | { ok: false; reason: string };

/**
 * Whether a text is a National Insurance number HMRC could have issued, and the number normalised
 * (spaces out, upper case: `ab 12 34 56 c` is `AB123456C`). Two prefix letters, neither of them D,
 * F, I, Q, U or V and the second not O, the prefix not BG, GB, KN, NK, NT, TN or ZZ; six digits; a
 * suffix A, B, C or D. The reason says everything that is wrong, so one correction is enough.
 */
export function checkNationalInsuranceNumber(text: string): NationalInsuranceNumberCheck {
  const value = normaliseNationalRegistrationNumber(text);
  const faults: string[] = [];
  if (!NATIONAL_INSURANCE_NUMBER.test(value)) {
    faults.push(value.length === 9 ? `it must be ${LAYOUT}` : `it has ${value.length} characters (spaces aside) where one has 9: ${LAYOUT}`);
  }
  const prefix = value.slice(0, 2);
  if (/^[A-Z]{2}$/.test(prefix)) {
    const [first, second] = [prefix[0]!, prefix[1]!];
    const letters: string[] = [];
    if (NEVER_FIRST_PREFIX_LETTERS.includes(first)) letters.push(`${first} is never the first letter (D, F, I, Q, U and V are not used)`);
    if (NEVER_SECOND_PREFIX_LETTERS.includes(second)) letters.push(`${second} is never the second letter (D, F, I, O, Q, U and V are not used)`);
    if (letters.length > 0) faults.push(`the prefix ${prefix} is never issued: ${letters.join(', and ')}`);
    else if (UNALLOCATED_PREFIXES.includes(prefix)) faults.push(`the prefix ${prefix} is not allocated (BG, GB, KN, NK, NT, TN and ZZ never are)`);
  }
  if (faults.length > 0) return { ok: false, reason: `is not a National Insurance number: ${faults.join('; ')}` };
  return { ok: true, value };
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

/**
 * A candidate with every family name the directory knows for them: each employment's, as its
 * payroll spells it, or the person's where a payroll gave none (decision 0015).
 */
export interface KnownPerson {
  date_of_birth: string | null;
  family_names: readonly string[];
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
  return matchesKnownPerson({ date_of_birth: candidate.date_of_birth, family_names: [candidate.family_name] }, identity);
}

/**
 * The matching rule against every family name the directory knows for the candidate (KnownPerson):
 * the family name matches when it is one of them, so a person whose payrolls spell the name
 * differently, or one of which has a newer name, is found by any. Every name is compared, in
 * constant time and without short-circuiting (a candidate without names is compared with an empty
 * one), so the time taken says nothing about which name, or which identifier, was right.
 */
export function matchesKnownPerson(candidate: KnownPerson, identity: PersonIdentity): boolean {
  const names = candidate.family_names.length > 0 ? candidate.family_names : [''];
  let sameFamilyName = 0;
  for (const name of names) {
    const stored = normaliseFamilyName(name);
    sameFamilyName |= Number(stored !== '') & Number(sameInConstantTime(stored, identity.familyName));
  }
  const bothKnown = isCompleteIdentity(identity) && candidate.date_of_birth !== null;
  const sameBirthDate = sameInConstantTime(candidate.date_of_birth ?? '', identity.dateOfBirth);
  return (Number(bothKnown) & Number(sameBirthDate) & sameFamilyName) === 1;
}

/** The person's identifiers as the directory holds them. */
export interface StoredIdentity {
  national_registration_number: string | null;
  date_of_birth: string | null;
}

export interface IdentityUpdate {
  /** What to write to the person: only identifiers given that differ from what is stored. */
  changes: Partial<StoredIdentity>;
  /** Identifiers given that differ from the stored ones while another payroll employs the person too. */
  conflicts: Array<keyof StoredIdentity>;
}

/**
 * What one payroll's record (a file's row, a provider's push) may change of the person it names
 * (decision 0015). The national registration number and the date of birth are the person's, shared
 * by every employment. One that is not given (left out, an empty cell) is kept, never cleared: a
 * payroll that does not say is not saying there is none. One that is given fills a gap, and
 * replaces a different stored one only when no other payroll employs the person; otherwise it is a
 * conflict (two payrolls disagree on who the person is) that a person settles, rather than two
 * sources undoing each other on every import.
 */
export function identityUpdate(
  stored: StoredIdentity,
  given: { national_registration_number?: string | null | undefined; date_of_birth?: string | null | undefined },
  employedElsewhere: boolean,
): IdentityUpdate {
  const update: IdentityUpdate = { changes: {}, conflicts: [] };
  for (const key of ['national_registration_number', 'date_of_birth'] as const) {
    const value = given[key];
    if (value === undefined || value === null || value === stored[key]) continue;
    if (stored[key] !== null && employedElsewhere) update.conflicts.push(key);
    else update.changes[key] = value;
  }
  return update;
}

/** Stands in when no candidate was found, so a check does the same work whether the number exists or not. */
export const NOBODY: DirectoryPerson = { date_of_birth: null, family_name: '' };
