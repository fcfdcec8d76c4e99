import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { SchedulesTable, ScheduleStatus, ScheduleStatusReason } from '../../platform/db/tables.ts';
import type { PaymentRow } from '../payments/payment-resource.ts';
import { paymentStatusSchema } from '../payments/payment-resource.ts';
import { expectedPayments } from './expected-payments.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';

export const SCHEDULE_STATUSES = ['active', 'completed', 'cancelled', 'errored'] as const satisfies readonly ScheduleStatus[];
export const scheduleStatusSchema = z.enum(SCHEDULE_STATUSES).meta({
  id: 'ScheduleStatus',
  description:
    '`active` while an instalment may still collect; then, for good: `completed` when every instalment was collected in full, ' +
    '`errored` when an instalment failed, was refused at the lock or ended partly collected, `cancelled` when the biller ' +
    'cancelled the schedule or the instalments left were cancelled (by the biller, or with the mandate). `status_reason` says which.',
  example: 'active',
});

export const SCHEDULE_STATUS_REASONS = [
  'all_instalments_collected',
  'instalment_failed',
  'instalment_refused',
  'instalments_not_collected_in_full',
  'instalments_cancelled',
  'mandate_revoked',
  'mandate_ended',
  'cancelled_by_biller',
] as const satisfies readonly ScheduleStatusReason[];
export const scheduleStatusReasonSchema = z.enum(SCHEDULE_STATUS_REASONS).meta({
  id: 'ScheduleStatusReason',
  description:
    'Why a schedule left `active`; null while it is active. `completed`: `all_instalments_collected`. `errored`: ' +
    '`instalment_failed` (payroll deducted nothing of an instalment), `instalment_refused` (the lock refused an instalment ' +
    'over the most a payment request may be), `instalments_not_collected_in_full` (none left to collect, one or more only ' +
    'partly collected). `cancelled`: `cancelled_by_biller` (POST /schedules/{schedule_id}/cancel), `mandate_revoked` or ' +
    '`mandate_ended` (the instalments left were cancelled with their mandate, revoked or ended with the employment), ' +
    '`instalments_cancelled` (the biller cancelled the instalments left one by one).',
  example: 'all_instalments_collected',
});

/** The instalments every schedule example of /openapi.json shows: 2 x GBP 50.00, a month apart. */
const instalmentExamples = [
  { instalment_number: 1, payment_id: exampleIds.payment, amount: 5000, due_date: '2026-11-30', target_pay_date: '2026-11-27', status: 'pending' },
  { instalment_number: 2, payment_id: exampleIds.secondPayment, amount: 5000, due_date: '2026-12-31', target_pay_date: '2026-12-24', status: 'pending' },
];

/** Both instalments, still to collect: what an active schedule expects. */
const expectedPaymentExamples = instalmentExamples.map((instalment) => ({
  instalment_number: instalment.instalment_number,
  payment_id: instalment.payment_id,
  pay_date: instalment.target_pay_date,
  amount: instalment.amount,
  currency: 'GBP',
}));

const scheduleExample = {
  id: exampleIds.schedule,
  mandate_id: exampleIds.mandate,
  status: 'active',
  status_reason: null,
  currency: 'GBP',
  total_amount: 10000,
  instalment_count: 2,
  metadata: { agreement: 'AGR-7781' },
  version: 1,
  created_at: exampleInstants.created,
  updated_at: exampleInstants.created,
  instalments: instalmentExamples,
  expected_payments: expectedPaymentExamples,
};

export const instalmentResponseSchema = z
  .object({
    instalment_number: z.number().int(),
    payment_id: z.uuid(),
    amount: z.number().int(),
    due_date: z.iso.date().nullable(),
    target_pay_date: z.iso.date(),
    status: paymentStatusSchema,
  })
  .meta({
    id: 'InstalmentResponse',
    description: 'One instalment of a schedule and the payment request that collects it (amount in integer minor units).',
    example: instalmentExamples[0],
  });

export const expectedPaymentSchema = z
  .object({
    instalment_number: z.number().int(),
    payment_id: z.uuid(),
    /** The pay date payroll is (or will be) asked to deduct it on: the instalment's target pay date. */
    pay_date: z.iso.date(),
    /** Integer minor units still expected: the instalment's amount less what was collected of it so far. */
    amount: z.number().int(),
    currency: z.string(),
  })
  .meta({
    id: 'ExpectedPayment',
    description:
      'What a schedule still expects to collect of one instalment that may still collect (`pending` or `instructed`): ' +
      'on which pay date, and how much is still owed of it in integer minor units.',
    example: expectedPaymentExamples[0],
  });

export const scheduleResponseSchema = z
  .object({
    id: z.uuid(),
    mandate_id: z.uuid(),
    status: scheduleStatusSchema,
    status_reason: scheduleStatusReasonSchema.nullable(),
    currency: z.string(),
    /** Integer minor units: the sum of the instalment amounts. */
    total_amount: z.number().int(),
    instalment_count: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    version: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    instalments: z.array(instalmentResponseSchema),
    /** One per instalment that may still collect, in instalment order; empty once none can. */
    expected_payments: z.array(expectedPaymentSchema),
  })
  .meta({
    id: 'ScheduleResponse',
    description: 'A schedule of instalments on a mandate; each instalment is a payment request of its own.',
    example: scheduleExample,
  });

export type ScheduleResource = z.infer<typeof scheduleResponseSchema>;

export const scheduleEnvelopeSchema = z
  .object({ schedule: scheduleResponseSchema })
  .meta({ id: 'ScheduleEnvelope', description: 'One schedule with its instalments.', example: { schedule: scheduleExample } });
export const scheduleCancelResponseSchema = z.object({ schedule: scheduleResponseSchema }).meta({
  id: 'ScheduleCancelResponse',
  description: 'The schedule, now cancelled, with its instalments.',
  example: {
    schedule: {
      ...scheduleExample,
      status: 'cancelled',
      status_reason: 'cancelled_by_biller',
      version: 2,
      updated_at: exampleInstants.updated,
      instalments: instalmentExamples.map((instalment) => ({ ...instalment, status: 'cancelled' })),
      expected_payments: [],
    },
  },
});
export const schedulesPageSchema = z.object({ schedules: z.array(scheduleResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'GetSchedulesPagedResponse',
  description: 'A page of schedules, newest first.',
  example: { schedules: [scheduleExample], paging: pagingExample },
});

export type ScheduleRow = Selectable<SchedulesTable>;

/** `payments` are the schedule's instalments; they are listed in instalment order whatever order they come in. */
export function toScheduleResource(row: ScheduleRow, payments: readonly PaymentRow[]): ScheduleResource {
  return {
    id: row.id,
    mandate_id: row.mandate_id,
    status: row.status,
    status_reason: row.status_reason,
    currency: row.currency,
    total_amount: row.total_amount,
    instalment_count: row.instalment_count,
    metadata: (row.metadata ?? null) as Record<string, unknown> | null,
    version: row.version,
    created_at: isoInstant(row.created_at),
    updated_at: isoInstant(row.updated_at),
    instalments: [...payments]
      .sort((a, b) => (a.instalment_number ?? 0) - (b.instalment_number ?? 0))
      .map((p) => ({
        instalment_number: p.instalment_number!,
        payment_id: p.id,
        amount: p.amount,
        due_date: p.due_date,
        target_pay_date: p.target_pay_date,
        status: p.status,
      })),
    expected_payments: expectedPayments(payments),
  };
}
