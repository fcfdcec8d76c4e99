import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { ConsumersTable, MandatesTable } from '../../platform/db/tables.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';
import { MANDATE_STATUSES } from './mandate-transitions.ts';

export const mandateStatusSchema = z.enum(MANDATE_STATUSES).meta({
  id: 'MandateStatus',
  description:
    '`pending_enablement` until payroll enables it; then `active` (payment requests may be made), or `suspended` while the ' +
    'employee is not on the payroll this period. It ends as `revoked` (by the biller), `cancelled` (by the employee or ' +
    'employer), `expired`, or `failed` (enablement was rejected).',
  example: 'active',
});

/** The example every mandate view of /openapi.json shows. */
const mandateExample = {
  id: exampleIds.mandate,
  status: 'active',
  status_reason: null,
  employee_id: exampleIds.employee,
  payroll_id: exampleIds.payroll,
  consumer: {
    given_name: 'Alex',
    family_name: 'Taylor',
    email_address: 'alex.taylor@example.com',
    phone_number: '+447700900123',
    date_of_birth: '1988-04-12',
    postal_code: 'SW1A 1AA',
    national_registration_number: 'QQ123456C',
    external_reference: 'CUST-000042',
  },
  currency: 'GBP',
  limitations: { max_amount_per_pay_date: 10000, max_total_amount: 120000, valid_from: '2026-11-01', valid_to: null },
  authorisation_source: { type: 'online', reference: 'consent-8f3a', authorised_at: '2026-11-02T09:14:03.000Z', ip_address: '203.0.113.24' },
  reference: 'LOAN-2026-0042',
  metadata: { loan_id: 'L-88231' },
  version: 2,
  created_at: exampleInstants.created,
  updated_at: exampleInstants.updated,
  revoked_at: null,
};

export const AUTHORISATION_SOURCE_TYPES = ['online', 'paper', 'telephone', 'in_person'] as const;

const consumerResponseSchema = z.object({
  given_name: z.string(),
  family_name: z.string(),
  email_address: z.string().nullable(),
  phone_number: z.string().nullable(),
  date_of_birth: z.iso.date().nullable(),
  postal_code: z.string().nullable(),
  national_registration_number: z.string().nullable(),
  external_reference: z.string().nullable(),
});

const limitationsResponseSchema = z.object({
  /** Integer minor units; null means no cap. */
  max_amount_per_pay_date: z.number().int().nullable(),
  max_total_amount: z.number().int().nullable(),
  valid_from: z.iso.date().nullable(),
  valid_to: z.iso.date().nullable(),
});

const authorisationSourceResponseSchema = z.object({
  type: z.enum(AUTHORISATION_SOURCE_TYPES),
  reference: z.string().nullable(),
  authorised_at: z.iso.datetime(),
  ip_address: z.string().nullable(),
});

export const mandateResponseSchema = z
  .object({
    id: z.uuid(),
    status: mandateStatusSchema,
    status_reason: z.string().nullable(),
    employee_id: z.uuid(),
    payroll_id: z.uuid(),
    consumer: consumerResponseSchema,
    currency: z.string(),
    limitations: limitationsResponseSchema,
    authorisation_source: authorisationSourceResponseSchema,
    reference: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    version: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
  })
  .meta({
    id: 'MandateRecordResponse',
    description:
      "A mandate: an employee's authority for one biller to deduct from their pay on one payroll, with its limits and how it " + 'was given. Amounts are integer minor units.',
    example: mandateExample,
  });

export type MandateResource = z.infer<typeof mandateResponseSchema>;
export type AuthorisationSource = z.infer<typeof authorisationSourceResponseSchema>;

export const mandateEnvelopeSchema = z
  .object({ mandate: mandateResponseSchema })
  .meta({ id: 'MandateEnvelope', description: 'One mandate.', example: { mandate: mandateExample } });
export const mandateDeleteResponseSchema = z.object({ mandate: mandateResponseSchema, cancelled_payment_ids: z.array(z.uuid()) }).meta({
  id: 'MandateDeleteResponse',
  description: 'The mandate, now revoked, and the payment requests its revocation cancelled.',
  example: {
    mandate: { ...mandateExample, status: 'revoked', status_reason: null, version: 3, revoked_at: exampleInstants.updated },
    cancelled_payment_ids: [exampleIds.payment],
  },
});
export const mandatesPageSchema = z.object({ mandates: z.array(mandateResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'GetMandatesPagedResponse',
  description: 'A page of mandates, newest first.',
  example: { mandates: [mandateExample], paging: pagingExample },
});

export type MandateRow = Selectable<MandatesTable>;
export type ConsumerData = Pick<
  Selectable<ConsumersTable>,
  'given_name' | 'family_name' | 'email_address' | 'phone_number' | 'date_of_birth' | 'postal_code' | 'national_registration_number' | 'external_reference'
>;
/** A mandate row with the consumer it was given for: everything its API view needs. */
export type MandateWithConsumer = MandateRow & { consumer: ConsumerData };

function authorisationSourceOf(stored: unknown): AuthorisationSource {
  const source = stored as Partial<AuthorisationSource>;
  return {
    type: source.type!,
    reference: source.reference ?? null,
    authorised_at: source.authorised_at!,
    ip_address: source.ip_address ?? null,
  };
}

/** The API's view of a mandate; also the `data` of mandate events, so webhooks match GETs. */
export function toMandateResource(row: MandateWithConsumer): MandateResource {
  return {
    id: row.id,
    status: row.status,
    status_reason: row.status_reason,
    employee_id: row.employee_id,
    payroll_id: row.payroll_id,
    consumer: {
      given_name: row.consumer.given_name,
      family_name: row.consumer.family_name,
      email_address: row.consumer.email_address,
      phone_number: row.consumer.phone_number,
      date_of_birth: row.consumer.date_of_birth,
      postal_code: row.consumer.postal_code,
      national_registration_number: row.consumer.national_registration_number,
      external_reference: row.consumer.external_reference,
    },
    currency: row.currency,
    limitations: {
      max_amount_per_pay_date: row.max_amount_per_pay_date,
      max_total_amount: row.max_total_amount,
      valid_from: row.valid_from,
      valid_to: row.valid_to,
    },
    authorisation_source: authorisationSourceOf(row.authorisation_source),
    reference: row.reference,
    metadata: (row.metadata ?? null) as Record<string, unknown> | null,
    version: row.version,
    created_at: isoInstant(row.created_at),
    updated_at: isoInstant(row.updated_at),
    revoked_at: row.revoked_at === null ? null : isoInstant(row.revoked_at),
  };
}
