import { z } from 'zod';
import type { EmployeeOnPayroll } from './directory-repository.ts';
import { contractTypeSchema, employmentStatusSchema } from '../payroll-providers/reference-schemas.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { currencySchema, isoDateSchema, isoInstant, uuidSchema } from '../../platform/shared/schemas.ts';

/** The employee the examples of /openapi.json show, as payroll keeps them. */
const employeeFields = {
  given_name: 'Alex',
  family_name: 'Taylor',
  national_registration_number: 'QQ123456C',
  date_of_birth: '1988-04-12',
  email_address: 'alex.taylor@example.com',
  phone_number: '+447700900123',
  postal_code: 'SW1A 1AA',
  payroll_reference: 'W-004211',
  start_date: '2021-03-01',
  end_date: null,
  employment_status: 'active',
  contract_type: 'full_time',
  annualised_salary: 3450000,
  currency: 'GBP',
};

const employeeExample = {
  id: exampleIds.employee,
  payroll_id: exampleIds.payroll,
  ...employeeFields,
  created_at: exampleInstants.created,
  updated_at: exampleInstants.updated,
};

/**
 * What a payroll provider PUTs for one employee on one of its payrolls. A PUT replaces the
 * employment's record on that payroll: an optional field left out is cleared, not kept. The national
 * registration number and date of birth are the person's, for every payroll (decision 0015): left
 * out, they are kept.
 */
export const employeeRecordRequestSchema = z
  .strictObject({
    employee: z
      .strictObject({
        given_name: z.string().trim().min(1).max(200),
        family_name: z.string().trim().min(1).max(200),
        national_registration_number: z.string().trim().min(1).max(32).nullish(),
        date_of_birth: isoDateSchema.nullish(),
        email_address: z.email().nullish(),
        phone_number: z.string().trim().min(3).max(32).nullish(),
        postal_code: z.string().trim().min(2).max(16).nullish(),
        payroll_reference: z.string().trim().min(1).max(64),
        start_date: isoDateSchema.nullish(),
        end_date: isoDateSchema.nullish(),
        employment_status: employmentStatusSchema,
        contract_type: contractTypeSchema.optional(),
        /** Integer minor units of `currency`. */
        annualised_salary: z.number().int('must be an integer in minor units').min(0).max(999_999_999_999_999).nullish(),
        /** Defaults to the payroll's currency, and must equal it. */
        currency: currencySchema.optional(),
      })
      .refine((e) => !e.start_date || !e.end_date || e.start_date <= e.end_date, {
        path: ['end_date'],
        message: 'must not be before start_date',
      }),
  })
  .meta({
    id: 'EmployeeRecordRequest',
    description:
      "Everything payroll knows of one employee on one payroll. It replaces the employment's record on this payroll: an optional field left out is cleared, " +
      "except the person's national_registration_number and date_of_birth, which every payroll of theirs shares and which are kept when left out. " +
      "`annualised_salary` is in integer minor units of `currency`, which defaults to (and must be) the payroll's.",
    example: { employee: employeeFields },
  });

export type EmployeeRecord = z.infer<typeof employeeRecordRequestSchema>['employee'];

export const employeeResourceSchema = z
  .object({
    id: uuidSchema,
    payroll_id: uuidSchema,
    given_name: z.string(),
    family_name: z.string(),
    national_registration_number: z.string().nullable(),
    date_of_birth: isoDateSchema.nullable(),
    email_address: z.string().nullable(),
    phone_number: z.string().nullable(),
    postal_code: z.string().nullable(),
    payroll_reference: z.string(),
    start_date: isoDateSchema.nullable(),
    end_date: isoDateSchema.nullable(),
    employment_status: employmentStatusSchema,
    contract_type: contractTypeSchema,
    /** Integer minor units of `currency`; null when payroll did not say. */
    annualised_salary: z.number().int().nullable(),
    currency: currencySchema,
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({
    id: 'Employee',
    description:
      "An employee on a payroll, as that payroll last sent them (name and contact details are this payroll's; national_registration_number and date_of_birth the person's); `annualised_salary` in integer minor units, null when payroll did not say.",
    example: employeeExample,
  });

export type EmployeeResource = z.infer<typeof employeeResourceSchema>;

export const employeeEnvelopeSchema = z
  .object({ employee: employeeResourceSchema })
  .meta({ id: 'EmployeeEnvelope', description: 'One employee on a payroll.', example: { employee: employeeExample } });

/**
 * The `data` of employee.updated webhooks: the employment as billers holding mandates need it. The
 * contact details and identifiers (national registration number, birth date, e-mail, phone, postal
 * code) stay out: billers have their own consumer data and gain nothing from a copy of payroll's.
 */
export const employeeUpdatePayloadSchema = employeeResourceSchema
  .pick({
    id: true,
    payroll_id: true,
    given_name: true,
    family_name: true,
    payroll_reference: true,
    employment_status: true,
    start_date: true,
    end_date: true,
    contract_type: true,
    annualised_salary: true,
    currency: true,
    updated_at: true,
  })
  .meta({
    id: 'EmployeeUpdatePayload',
    description: 'The `data` of an `employee.updated` event: the employment, without contact details or identifiers.',
    example: {
      id: exampleIds.employee,
      payroll_id: exampleIds.payroll,
      given_name: 'Alex',
      family_name: 'Taylor',
      payroll_reference: 'W-004211',
      employment_status: 'leaver',
      start_date: '2021-03-01',
      end_date: '2026-12-31',
      contract_type: 'full_time',
      annualised_salary: 3450000,
      currency: 'GBP',
      updated_at: exampleInstants.updated,
    },
  });

export type EmployeeUpdatePayload = z.infer<typeof employeeUpdatePayloadSchema>;

export function toEmployeeResource(row: EmployeeOnPayroll): EmployeeResource {
  return {
    id: row.id,
    payroll_id: row.payroll_id,
    given_name: row.given_name,
    family_name: row.family_name,
    national_registration_number: row.national_registration_number,
    date_of_birth: row.date_of_birth,
    email_address: row.email_address,
    phone_number: row.phone_number,
    postal_code: row.postal_code,
    payroll_reference: row.payroll_reference,
    start_date: row.start_date,
    end_date: row.end_date,
    employment_status: row.employment_status,
    contract_type: row.contract_type,
    annualised_salary: row.annualised_salary,
    currency: row.currency,
    created_at: isoInstant(row.created_at),
    updated_at: isoInstant(row.updated_at),
  };
}

export function toEmployeeUpdatePayload(row: EmployeeOnPayroll): EmployeeUpdatePayload {
  const { national_registration_number, date_of_birth, email_address, phone_number, postal_code, created_at, ...payload } = toEmployeeResource(row);
  return payload;
}

/** Whether billers would see a difference (the instant of the change itself aside). */
export function employeeUpdateDiffers(before: EmployeeUpdatePayload, after: EmployeeUpdatePayload): boolean {
  const { updated_at: _before, ...a } = before;
  const { updated_at: _after, ...b } = after;
  return JSON.stringify(a) !== JSON.stringify(b);
}
