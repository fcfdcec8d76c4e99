import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { SchedulesTable, ScheduleStatus } from '../../platform/db/tables.ts';
import type { PaymentRow } from '../payments/payment-resource.ts';
import { paymentStatusSchema } from '../payments/payment-resource.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';

export const SCHEDULE_STATUSES = ['active', 'completed', 'cancelled', 'errored'] as const satisfies readonly ScheduleStatus[];
export const scheduleStatusSchema = z.enum(SCHEDULE_STATUSES).meta({
  id: 'ScheduleStatus',
  description:
    '`active` while instalments remain, `completed` when every instalment has run its course, `cancelled` by the biller, ' +
    '`errored` when an instalment could not be handled.',
  example: 'active',
});

/** The instalments every schedule example of /openapi.json shows: 2 x GBP 50.00, a month apart. */
const instalmentExamples = [
  { instalment_number: 1, payment_id: exampleIds.payment, amount: 5000, due_date: '2026-11-30', target_pay_date: '2026-11-27', status: 'pending' },
  { instalment_number: 2, payment_id: exampleIds.secondPayment, amount: 5000, due_date: '2026-12-31', target_pay_date: '2026-12-24', status: 'pending' },
];

const scheduleExample = {
  id: exampleIds.schedule,
  mandate_id: exampleIds.mandate,
  status: 'active',
  currency: 'GBP',
  total_amount: 10000,
  instalment_count: 2,
  metadata: { agreement: 'AGR-7781' },
  version: 1,
  created_at: exampleInstants.created,
  updated_at: exampleInstants.created,
  instalments: instalmentExamples,
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

export const scheduleResponseSchema = z
  .object({
    id: z.uuid(),
    mandate_id: z.uuid(),
    status: scheduleStatusSchema,
    currency: z.string(),
    /** Integer minor units: the sum of the instalment amounts. */
    total_amount: z.number().int(),
    instalment_count: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    version: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    instalments: z.array(instalmentResponseSchema),
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
      version: 2,
      updated_at: exampleInstants.updated,
      instalments: instalmentExamples.map((instalment) => ({ ...instalment, status: 'cancelled' })),
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
  };
}
