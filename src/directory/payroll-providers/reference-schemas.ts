import { z } from 'zod';
import { exampleIds } from '../../platform/shared/examples.ts';
import { currencySchema, isoDateSchema, uuidSchema } from '../../platform/shared/schemas.ts';

/** The open pay dates the examples of /openapi.json show for the example payroll (monthly, last Friday). */
const payDateExamples = [
  { pay_date: '2026-11-27', payroll_cutoff_date: '2026-11-20', pay_period: '8-2026' },
  { pay_date: '2026-12-24', payroll_cutoff_date: '2026-12-17', pay_period: '9-2026' },
];

// The payroll provider reference interface, as the salary-deduction interface defines it. Our own API's
// availability endpoints answer in exactly these shapes too. Field names are the contract.

export const availabilityStatusSchema = z.enum(['confirmed', 'not_found', 'not_eligible', 'pending_employer_opt_in']).meta({
  id: 'AvailabilityStatus',
  description:
    '`confirmed`: the person can pay by salary deduction now, through at least one employment; `pending_employer_opt_in`: they are ' +
    'employed, but no employer of theirs has opted in yet; `not_eligible`: they are known, but no employment can carry a deduction (a ' +
    'leaver, an unknown status, an employer that opted out, or a payroll in another currency); `not_found`: no employment of theirs is known.',
  example: 'confirmed',
});
export const optInStatusSchema = z.enum(['pending', 'opted_in', 'opted_out']);
export const employmentStatusSchema = z.enum(['active', 'leaver', 'unknown']);
export const contractTypeSchema = z.enum(['full_time', 'part_time', 'fixed_term', 'zero_hours', 'unknown']);
export const paymentRunFrequencySchema = z.enum(['weekly', 'fortnightly', 'four_weekly', 'monthly', 'unknown']);

/** ISO 8601 with offset, e.g. 2026-11-27T00:00:00+00:00 (a pay date at midnight in the service zone). */
export const dateTimeSchema = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with offset' });

export const fullAvailabilityRequestSchema = z
  .strictObject({
    availability_check: z.strictObject({
      national_registration_number: z.string().min(1).max(32).optional(),
      date_of_birth: isoDateSchema.optional(),
      given_name: z.string().min(1).max(200).optional(),
      family_name: z.string().min(1).max(200).optional(),
      email_address: z.email().optional(),
      phone_number: z.string().min(3).max(32).optional(),
      postal_code: z.string().min(2).max(16).optional(),
      currency: currencySchema.optional(),
    }),
  })
  .meta({
    id: 'FullAvailabilityCheckRequest',
    description:
      'The person to look up. The national registration number, date of birth and family name must all match for a ' +
      'result; the other fields narrow it down or are checked against it.',
    example: {
      availability_check: {
        national_registration_number: 'QQ123456C',
        date_of_birth: '1988-04-12',
        given_name: 'Alex',
        family_name: 'Taylor',
        postal_code: 'SW1A 1AA',
        currency: 'GBP',
      },
    },
  });

export const payDateObjectSchema = z.object({
  pay_date: isoDateSchema,
  payroll_cutoff_date: isoDateSchema,
  pay_period: z.string().regex(/^[0-9]+-[0-9]+$/, 'must be of the form <n>-<n>'),
});

export const employerSchema = z.object({
  salary_deduction_opt_in_status: optInStatusSchema,
  name: z.string(),
  sic_code: z.string(),
  industry_name: z.string(),
  id: z.string(),
});

export const payrollSchema = z.object({
  id: uuidSchema,
  employment_status: employmentStatusSchema,
  contract_type: contractTypeSchema,
  payment_run_frequency: paymentRunFrequencySchema,
  annualised_salary: z.number().int(),
  pay_dates: z.array(payDateObjectSchema),
});

export const employmentSchema = z.object({
  employee_id: uuidSchema,
  start_date: dateTimeSchema,
  currency: currencySchema,
  employer: employerSchema,
  payrolls: z.array(z.object({ payroll: payrollSchema })),
});

export const fullAvailabilityResponseSchema = z
  .object({
    availability_check: z.object({
      availability_status: availabilityStatusSchema,
      currency: currencySchema,
      employments: z.array(z.object({ employment: employmentSchema })),
    }),
  })
  .meta({
    id: 'FullAvailabilityCheckResponse',
    description:
      "Whether the person can pay by salary deduction, with each employment: the employer, its opt-in status, and the person's " +
      'payrolls with the pay dates still open to new payment requests. Salaries are integer minor units.',
    example: {
      availability_check: {
        availability_status: 'confirmed',
        currency: 'GBP',
        employments: [
          {
            employment: {
              employee_id: exampleIds.employee,
              start_date: '2021-03-01T00:00:00+00:00',
              currency: 'GBP',
              employer: {
                salary_deduction_opt_in_status: 'opted_in',
                name: 'Acme Manufacturing Ltd',
                sic_code: '25620',
                industry_name: 'Machining',
                id: 'EMP-10442',
              },
              payrolls: [
                {
                  payroll: {
                    id: exampleIds.payroll,
                    employment_status: 'active',
                    contract_type: 'full_time',
                    payment_run_frequency: 'monthly',
                    annualised_salary: 3450000,
                    pay_dates: payDateExamples,
                  },
                },
              ],
            },
          },
        ],
      },
    },
  });

export const lightAvailabilityRequestSchema = z
  .strictObject({
    availability_check: z.strictObject({
      national_registration_number: z.string().min(1).max(32).optional(),
      date_of_birth: isoDateSchema.optional(),
      family_name: z.string().min(1).max(200).optional(),
      postal_code: z.string().min(2).max(16).optional(),
      email_address: z.email().optional(),
    }),
  })
  .meta({
    id: 'LightAvailabilityCheckRequest',
    description: 'The person to look up; the national registration number, date of birth and family name must all match for a result.',
    example: { availability_check: { national_registration_number: 'QQ123456C', date_of_birth: '1988-04-12', family_name: 'Taylor' } },
  });

export const lightAvailabilityResponseSchema = z
  .object({
    availability_check: z.object({ availability_status: availabilityStatusSchema, employment_count: z.number().int() }),
  })
  .meta({
    id: 'LightAvailabilityCheckResponse',
    description: 'Whether the person can pay by salary deduction, and through how many employments; nothing personal.',
    example: { availability_check: { availability_status: 'confirmed', employment_count: 1 } },
  });

export const enablementRequestSchema = z
  .strictObject({
    enablement: z.strictObject({
      employee_id: uuidSchema,
      payroll_id: uuidSchema,
      mandate_id: uuidSchema,
    }),
  })
  .meta({
    id: 'SalaryDeductionEnablementRequest',
    description: 'The mandate to enable, with the employee and payroll it was created for.',
    example: { enablement: { employee_id: exampleIds.employee, payroll_id: exampleIds.payroll, mandate_id: exampleIds.mandate } },
  });

export const enablementStatusSchema = z.enum(['enabled', 'rejected', 'pending']);

export const enablementResponseSchema = z
  .object({
    enablement: z.object({
      employee_id: uuidSchema,
      payroll_id: uuidSchema,
      mandate_id: uuidSchema,
      status: enablementStatusSchema,
      reason: z.string().nullable(),
    }),
  })
  .meta({
    id: 'SalaryDeductionEnablementResponse',
    description: "Payroll's answer: `enabled`, `rejected` (with the reason) or still `pending`.",
    example: {
      enablement: { employee_id: exampleIds.employee, payroll_id: exampleIds.payroll, mandate_id: exampleIds.mandate, status: 'enabled', reason: null },
    },
  });

export const payrollScheduleResponseSchema = z
  .object({
    payroll: z.object({
      id: uuidSchema,
      employer_id: z.string(),
      name: z.string(),
      payment_run_frequency: paymentRunFrequencySchema,
      currency: currencySchema,
      pay_dates: z.array(payDateObjectSchema.extend({ lock_date: isoDateSchema.optional() })),
    }),
  })
  .meta({
    id: 'PayrollScheduleResponse',
    description:
      'A payroll and its calendar: each pay date with its payroll cut-off, pay period and lock date (the night its deductions ' +
      'are locked). `employer_id` is the employer as its payroll provider knows it.',
    example: {
      payroll: {
        id: exampleIds.payroll,
        employer_id: 'EMP-10442',
        name: 'Acme Manufacturing monthly',
        payment_run_frequency: 'monthly',
        currency: 'GBP',
        pay_dates: [
          { ...payDateExamples[0], lock_date: '2026-11-19' },
          { ...payDateExamples[1], lock_date: '2026-12-16' },
        ],
      },
    },
  });

export const paymentInformationSchema = z.object({
  payment_reference: z.string(),
  payment_amount: z.number(),
  payment_account: z.object({
    account_number: z.string(),
    sort_code: z.string().regex(/^[0-9]{2}-[0-9]{2}-[0-9]{2}$/, 'must be NN-NN-NN'),
    account_holder_name: z.string(),
  }),
});

export const employeePushRecordSchema = z
  .strictObject({
    pay_period: z.string().regex(/^[0-9]+-[0-9]+$/, 'must be of the form <n>-<n>'),
    id: z.string().min(1).max(200),
    version: z.number().int('must be an integer').min(0),
    salary_deduction: z.strictObject({
      employee_id: z.string().min(1),
      deduction_amount: z.number().min(0),
      currency: currencySchema,
    }),
    requested_payments: z.array(z.strictObject({ payment_information: paymentInformationSchema })).default([]),
  })
  .meta({
    id: 'SalaryDeductionEmployeePushRecord',
    description: 'What payroll deducted from one employee for one pay period, in major units (12.5 is GBP 12.50), as version `version` ' + 'of the record `id`.',
    example: {
      pay_period: '8-2026',
      id: 'ded-8-2026-000042',
      version: 1,
      salary_deduction: { employee_id: exampleIds.employee, deduction_amount: 25, currency: 'GBP' },
      requested_payments: [],
    },
  });

export const employeePushResponseSchema = z
  .object({
    pay_period: z.string(),
    id: z.string(),
    payroll_id: z.string(),
    version: z.number(),
    salary_deduction: z.object({ employee_id: z.string(), deduction_amount: z.number(), currency: z.string() }),
    outcome: z.enum(['Accepted']),
  })
  .meta({
    id: 'SalaryDeductionEmployeePushResponse',
    description: 'The record as received, on its payroll, accepted.',
    example: {
      pay_period: '8-2026',
      id: 'ded-8-2026-000042',
      payroll_id: exampleIds.payroll,
      version: 1,
      salary_deduction: { employee_id: exampleIds.employee, deduction_amount: 25, currency: 'GBP' },
      outcome: 'Accepted',
    },
  });

export type FullAvailabilityRequest = z.infer<typeof fullAvailabilityRequestSchema>;
export type FullAvailabilityResponse = z.infer<typeof fullAvailabilityResponseSchema>;
export type LightAvailabilityRequest = z.infer<typeof lightAvailabilityRequestSchema>;
export type LightAvailabilityResponse = z.infer<typeof lightAvailabilityResponseSchema>;
export type EnablementRequest = z.infer<typeof enablementRequestSchema>;
export type EnablementResponse = z.infer<typeof enablementResponseSchema>;
export type PayrollScheduleResponse = z.infer<typeof payrollScheduleResponseSchema>;
export type EmployeePushRecord = z.infer<typeof employeePushRecordSchema>;
export type EmployeePushResponse = z.infer<typeof employeePushResponseSchema>;
