import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { SchedulesTable, ScheduleStatus } from '../db/tables.ts';
import type { PaymentRow } from '../payments/payment-resource.ts';
import { paymentStatusSchema } from '../payments/payment-resource.ts';
import { pagingResponseSchema } from '../shared/paging.ts';
import { isoInstant } from '../shared/schemas.ts';

export const SCHEDULE_STATUSES = ['active', 'completed', 'cancelled', 'errored'] as const satisfies readonly ScheduleStatus[];
export const scheduleStatusSchema = z.enum(SCHEDULE_STATUSES).meta({ id: 'ScheduleStatus' });

export const instalmentResponseSchema = z
  .object({
    instalment_number: z.number().int(),
    payment_id: z.uuid(),
    amount: z.number().int(),
    due_date: z.iso.date().nullable(),
    target_pay_date: z.iso.date(),
    status: paymentStatusSchema,
  })
  .meta({ id: 'InstalmentResponse' });

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
  .meta({ id: 'ScheduleResponse' });

export type ScheduleResource = z.infer<typeof scheduleResponseSchema>;

export const scheduleEnvelopeSchema = z.object({ schedule: scheduleResponseSchema }).meta({ id: 'ScheduleEnvelope' });
export const scheduleCancelResponseSchema = z.object({ schedule: scheduleResponseSchema }).meta({ id: 'ScheduleCancelResponse' });
export const schedulesPageSchema = z
  .object({ schedules: z.array(scheduleResponseSchema), paging: pagingResponseSchema })
  .meta({ id: 'GetSchedulesPagedResponse' });

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
