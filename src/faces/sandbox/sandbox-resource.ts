import { z } from 'zod';
import { payoutResponseSchema } from '../../settlement/payouts/payout-resource.ts';
import { currencySchema, uuidSchema } from '../../platform/shared/schemas.ts';
import type { DeductionOutcome } from './sandbox-confirmations.ts';

// What the simulation operations take and answer. Amounts are integer minor units beside their
// currency, except in the deduction data and the confirmation, which keep the payroll interface's
// major units.

const EXAMPLE_PAYROLL_ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const EXAMPLE_EMPLOYEE_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const EXAMPLE_PAYMENT_ID = '1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed';

export const sandboxLockSchema = z
  .object({
    payroll_id: z.uuid(),
    pay_date: z.iso.date(),
    pay_period: z.string(),
    created: z.boolean().meta({ description: 'False when the pay date was already locked: nothing was written' }),
    deduction_data_id: z.uuid().meta({ description: 'The locked deduction data (snapshot) the provider pulls' }),
    snapshot_version: z.number().int(),
    employee_count: z.number().int(),
    payments_instructed: z.number().int(),
    total_amount: z.number().int().meta({ description: 'Integer minor units' }),
    currency: currencySchema,
    instruction_file: z.object({ file_name: z.string(), sha256: z.string() }),
    earlier_pay_dates_locked: z.array(z.iso.date()).meta({ description: 'Earlier unlocked pay dates locked first, oldest first' }),
  })
  .meta({
    id: 'SandboxPayDateLock',
    description: 'A sandbox pay date locked now, as the nightly lock would have: its deduction data locked with its instruction file',
    example: {
      payroll_id: EXAMPLE_PAYROLL_ID,
      pay_date: '2026-12-24',
      pay_period: '9-2026',
      created: true,
      deduction_data_id: '5f3a2c1e-8b7d-4e6f-9a1b-2c3d4e5f6a7b',
      snapshot_version: 1,
      employee_count: 1,
      payments_instructed: 1,
      total_amount: 12500,
      currency: 'GBP',
      instruction_file: { file_name: 'pennine-care-homes-ltd_monthly-payroll_2026-12-24_v1.csv', sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
      earlier_pay_dates_locked: [],
    },
  });

export type SandboxLock = z.infer<typeof sandboxLockSchema>;

export const sandboxLockEnvelopeSchema = z.object({ lock: sandboxLockSchema }).meta({
  id: 'SandboxPayDateLockEnvelope',
  description: 'The lock a simulation made (or found)',
  example: { lock: sandboxLockSchema.meta()!.example as SandboxLock },
});

const OUTCOMES = ['full', 'partial', 'leaver'] as const satisfies readonly DeductionOutcome[];

export const sandboxOutcomeSchema = z.enum(OUTCOMES).meta({
  id: 'SandboxDeductionOutcome',
  description: 'How payroll deducted: full (all of it), partial (half: net pay too low), leaver (nothing: the employee left)',
  example: 'partial',
});

export const sandboxConfirmationRequestSchema = z
  .strictObject({
    default_outcome: sandboxOutcomeSchema.default('full').meta({ description: 'The outcome of every employee not named in outcomes' }),
    outcomes: z.record(uuidSchema, sandboxOutcomeSchema).default({}).meta({ description: 'Outcomes per employee id of the pulled deduction data' }),
  })
  .meta({
    id: 'SandboxConfirmationRequest',
    description: 'What the simulated payroll reports it deducted; no body at all means every employee in full',
    example: { default_outcome: 'full', outcomes: { [EXAMPLE_EMPLOYEE_ID]: 'partial' } },
  })
  .optional();

export const sandboxConfirmationResponseSchema = z
  .object({
    confirmation: z.object({
      id: z.uuid(),
      payroll_id: z.uuid(),
      pay_date: z.iso.date(),
      pay_period: z.string(),
      deduction_data_id: z.uuid(),
      currency: currencySchema,
      total_amount: z.number().meta({ description: 'Major units, as the payroll interface exchanges them' }),
      employee_count: z.number().int(),
      received_at: z.iso.datetime(),
    }),
    outcomes: z.record(z.uuid(), sandboxOutcomeSchema).meta({ description: 'The outcome each employee of the deduction data got' }),
    reconciliation: z.object({
      snapshot_status: z.string().nullable(),
      employees: z.number().int(),
      collected: z.number().int().meta({ description: 'Integer minor units collected on this pay date' }),
      carried: z.number().int(),
      failed: z.number().int(),
      partially: z.number().int(),
      exceptions: z.number().int(),
    }),
    payment_requests: z
      .array(
        z.object({
          id: z.uuid(),
          employee_id: z.uuid(),
          status: z.string(),
          currency: currencySchema,
          amount: z.number().int(),
          collected_amount: z.number().int(),
        }),
      )
      .meta({ description: "The caller's payment requests this pay date attempted, as reconciliation left them" }),
  })
  .meta({
    id: 'SandboxConfirmationResponse',
    description: 'The confirmation the simulated provider submitted, and the reconciliation that followed at once',
    example: {
      confirmation: {
        id: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
        payroll_id: EXAMPLE_PAYROLL_ID,
        pay_date: '2026-12-24',
        pay_period: '9-2026',
        deduction_data_id: '5f3a2c1e-8b7d-4e6f-9a1b-2c3d4e5f6a7b',
        currency: 'GBP',
        total_amount: 125,
        employee_count: 1,
        received_at: '2026-11-25T10:15:00.000Z',
      },
      outcomes: { [EXAMPLE_EMPLOYEE_ID]: 'full' },
      reconciliation: { snapshot_status: 'reconciled', employees: 1, collected: 12500, carried: 0, failed: 0, partially: 0, exceptions: 0 },
      payment_requests: [{ id: EXAMPLE_PAYMENT_ID, employee_id: EXAMPLE_EMPLOYEE_ID, status: 'collected', currency: 'GBP', amount: 12500, collected_amount: 12500 }],
    },
  });

export type SandboxConfirmation = z.infer<typeof sandboxConfirmationResponseSchema>;

export const sandboxPayoutResponseSchema = z
  .object({
    payout_date: z.iso.date().meta({ description: 'The date the daily run would have paid the latest collected pay date' }),
    settled_through: z.iso.date().meta({ description: 'Collections with pay dates up to this date are in the payouts' }),
    payouts: z.array(payoutResponseSchema).meta({ description: 'The payouts made, each already marked paid' }),
    not_paid_out: z
      .array(z.object({ currency: currencySchema, outcome: z.enum(['carried_over', 'no_beneficiary_account', 'already_paid_out_today']) }))
      .meta({ description: 'Currencies that made no payout, and why' }),
  })
  .meta({
    id: 'SandboxPayoutResponse',
    description: "The sandbox biller's payout made now and marked paid",
    example: { payout_date: '2026-12-29', settled_through: '2026-12-24', payouts: [], not_paid_out: [] },
  });

export type SandboxPayout = z.infer<typeof sandboxPayoutResponseSchema>;
