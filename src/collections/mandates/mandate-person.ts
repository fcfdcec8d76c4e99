import type { FieldError } from '../../platform/shared/domain-errors.ts';
import type { ConsumerData } from './mandate-resource.ts';

/**
 * What the directory holds about the employee a mandate names: what the consumer is compared with.
 * `family_names`: every family name known for them, each payroll's spelling (decision 0015).
 */
export interface EmployeeOfRecord {
  national_registration_number: string | null;
  date_of_birth: string | null;
  family_names: readonly string[];
}

/** What of the consumer decides whether it is the employee. */
export type ConsumerIdentity = Pick<ConsumerData, 'family_name' | 'date_of_birth' | 'national_registration_number'>;

export interface ConsumerIdentityViolation {
  slug: 'consumer-identity-incomplete' | 'consumer-not-employee';
  /** The problem's detail, after "The mandate cannot be created: ". */
  summary: string;
  errors: FieldError[];
}

/**
 * Why the consumer a mandate is given for is not (or cannot be shown to be) the employee it names;
 * null when it is. The rule is the directory's matching rule (src/collections/mandates/consumer-identity.ts,
 * built on person-identity.ts, which availability checks use): payrolls depends on mandates, so the
 * edges hand the rule in rather than this area importing it.
 */
export type ConsumerIdentityCheck = (consumer: ConsumerIdentity, employee: EmployeeOfRecord) => ConsumerIdentityViolation | null;
