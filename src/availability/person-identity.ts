/** How an availability check recognises a person in the employee directory. */
export type PersonIdentity =
  | { by: 'national_registration_number'; nationalRegistrationNumber: string }
  | { by: 'name_and_birth_date'; familyName: string; dateOfBirth: string; postalCode: string | null };

/** National Insurance numbers are written with and without spaces, in either case. */
export function normaliseNationalRegistrationNumber(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

export function normalisePostalCode(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

/**
 * The national registration number identifies a person on its own. Without it, a family name and
 * a date of birth together are the least that tells two people apart (a postal code narrows it
 * further when given); anything less would match strangers, so it identifies nobody (null).
 */
export function personIdentity(fields: {
  national_registration_number?: string | undefined;
  family_name?: string | undefined;
  date_of_birth?: string | undefined;
  postal_code?: string | undefined;
}): PersonIdentity | null {
  const nrn = fields.national_registration_number?.trim();
  if (nrn) return { by: 'national_registration_number', nationalRegistrationNumber: normaliseNationalRegistrationNumber(nrn) };
  const familyName = fields.family_name?.trim();
  if (familyName && fields.date_of_birth) {
    const postalCode = fields.postal_code?.trim();
    return {
      by: 'name_and_birth_date',
      familyName,
      dateOfBirth: fields.date_of_birth,
      postalCode: postalCode ? normalisePostalCode(postalCode) : null,
    };
  }
  return null;
}
