import { z } from 'zod';
import { toMajorUnits } from '../../platform/money/major-units.ts';
import { exampleIds } from '../../platform/shared/examples.ts';
import { currencySchema, isoInstant, uuidSchema } from '../../platform/shared/schemas.ts';

/** A whole pay date in one submission; benchmarked at this size, so the work per line is set-based. */
export const MAX_CONFIRMATION_LINES = 100_000;

const payPeriodSchema = z.string().regex(/^[0-9]+-[0-9]+$/, 'must be of the form <n>-<n>');

export const confirmationSubmissionSchema = z
  .strictObject({
    confirmation: z.strictObject({
      /** The id of the deduction data (snapshot) the provider pulled and deducted from. */
      deduction_data_id: uuidSchema,
      pay_period: payPeriodSchema,
      currency: currencySchema,
      /** Major units, like every amount payroll exchanges: 125.5 is GBP 125.50. */
      total_amount: z.number().min(0),
      deductions: z
        .array(
          z.strictObject({
            employee_id: uuidSchema,
            deducted_amount: z.number().min(0),
            leaver: z.boolean().default(false),
          }),
        )
        .min(1)
        .max(MAX_CONFIRMATION_LINES),
    }),
  })
  .meta({
    id: 'SalaryDeductionConfirmationSubmission',
    description:
      'What payroll deducted on a whole pay date, one line per employee, in major units (25 is GBP 25.00), against the ' +
      'deduction data it answers; `leaver` marks an employee who left. The total must be the sum of the lines.',
    example: {
      confirmation: {
        deduction_data_id: exampleIds.deductionData,
        pay_period: '8-2026',
        currency: 'GBP',
        total_amount: 75,
        deductions: [{ employee_id: exampleIds.employee, deducted_amount: 75, leaver: false }],
      },
    },
  });

export type ConfirmationSubmission = z.infer<typeof confirmationSubmissionSchema>['confirmation'];

export const confirmationResponseSchema = z
  .object({
    confirmation: z.object({
      id: z.uuid(),
      payroll_id: z.uuid(),
      pay_date: z.iso.date(),
      pay_period: z.string(),
      deduction_data_id: z.uuid(),
      currency: z.string(),
      /** Major units. */
      total_amount: z.number(),
      employee_count: z.number().int(),
      received_at: z.iso.datetime(),
    }),
  })
  .meta({
    id: 'SalaryDeductionConfirmationResponse',
    description: 'The confirmation as stored, with its pay date and how many employees it covers; the total in major units.',
    example: {
      confirmation: {
        id: exampleIds.confirmation,
        payroll_id: exampleIds.payroll,
        pay_date: '2026-11-27',
        pay_period: '8-2026',
        deduction_data_id: exampleIds.deductionData,
        currency: 'GBP',
        total_amount: 75,
        employee_count: 1,
        received_at: '2026-11-27T14:02:51.006Z',
      },
    },
  });

export type ConfirmationResponse = z.infer<typeof confirmationResponseSchema>;

export function toConfirmationResponse(row: {
  id: string;
  payroll_id: string;
  pay_date: string;
  pay_period: string;
  deduction_data_id: string;
  currency: string;
  total_amount: number;
  employee_count: number;
  received_at: Date;
}): ConfirmationResponse {
  return {
    confirmation: {
      id: row.id,
      payroll_id: row.payroll_id,
      pay_date: row.pay_date,
      pay_period: row.pay_period,
      deduction_data_id: row.deduction_data_id,
      currency: row.currency,
      total_amount: toMajorUnits(row.total_amount, row.currency),
      employee_count: row.employee_count,
      received_at: isoInstant(row.received_at),
    },
  };
}
