import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConsumerIdentity, ConsumerIdentityViolation, EmployeeOfRecord } from './mandate-person.ts';
import { matchesKnownPerson, normaliseFamilyName, normaliseNationalRegistrationNumber, personIdentity } from '../../directory/payrolls/person-identity.ts';

function sameInConstantTime(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

const CONSUMER = '/mandate_record/consumer';

/**
 * Whether the consumer a mandate is given for is the employee it names, by the availability rule
 * (matchesKnownPerson): the same date of birth and the same family name as one the directory knows
 * for them (as normalised for availability checks), and, when the consumer carries a national registration number, the employee's own. The
 * employee id alone proves nothing about the person: without this a biller holding one could record
 * a mandate, and deduct from that employee's pay, in somebody else's name. A consumer without a date
 * of birth (or with a family name of no letters) cannot be judged and is refused as incomplete. A
 * mismatch names every field compared, never which one differed, so the answer cannot be used to
 * find out an employee's date of birth or name one field at a time; the comparisons run in
 * constant time for the same reason. (The mandates area declares the check, ConsumerIdentityCheck;
 * it lives here, beside the rule it applies.)
 */
export function consumerIdentityViolation(consumer: ConsumerIdentity, employee: EmployeeOfRecord): ConsumerIdentityViolation | null {
  const missing = [];
  if (!consumer.date_of_birth) {
    missing.push({ pointer: `${CONSUMER}/date_of_birth`, detail: "is required: with family_name it ties the mandate to the employee's record" });
  }
  if (normaliseFamilyName(consumer.family_name) === '') {
    missing.push({ pointer: `${CONSUMER}/family_name`, detail: 'must contain letters or digits' });
  }
  if (missing.length > 0) {
    return { slug: 'consumer-identity-incomplete', summary: "the consumer lacks what ties it to the employee's record", errors: missing };
  }

  const givenNumber = consumer.national_registration_number ?? null;
  const identity = personIdentity({
    // Left out, the number is the employee's: the biller proved it knew the number when the
    // availability check found the employee.
    national_registration_number: givenNumber ?? employee.national_registration_number ?? '',
    date_of_birth: consumer.date_of_birth ?? '',
    family_name: consumer.family_name,
  });
  const sameNumber = sameInConstantTime(identity.nationalRegistrationNumber, normaliseNationalRegistrationNumber(employee.national_registration_number ?? ''));
  const samePerson = matchesKnownPerson({ date_of_birth: employee.date_of_birth, family_names: employee.family_names }, identity);
  if ((Number(sameNumber) & Number(samePerson)) === 1) return null;

  const compared = ['family_name', 'date_of_birth', ...(givenNumber === null ? [] : ['national_registration_number'])];
  const detail = `does not match the employee's record (${compared.join(', ')} are compared together; which one differs is not said)`;
  return {
    slug: 'consumer-not-employee',
    summary: "the consumer is not the employee: the consumer's details do not match the employee's record",
    errors: compared.map((field) => ({ pointer: `${CONSUMER}/${field}`, detail })),
  };
}
