import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { PaymentRequestsTable } from '../../platform/db/tables.ts';
import { exampleIds, exampleInstants } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';
import { PAYMENT_STATUSES } from './payment-transitions.ts';

export const paymentStatusSchema = z.enum(PAYMENT_STATUSES).meta({
  id: 'PaymentStatus',
  description:
    'Where a payment request stands: `pending` until its pay date locks (and again when a shortfall is carried to a later ' +
    'pay date), `instructed` once payroll was asked to deduct it, `collected`, `partially_collected` or `failed` as payroll ' +
    'reports what it deducted (a later report can still change that), `paid_out` once the money reached the biller; ' +
    '`cancelled` before the lock, by the biller or with its mandate.',
  example: 'pending',
});

/** The example every payment request view of /openapi.json shows. */
const paymentExample = {
  id: exampleIds.payment,
  mandate_id: exampleIds.mandate,
  schedule_id: null,
  instalment_number: null,
  status: 'pending',
  status_reason: null,
  amount: 2500,
  currency: 'GBP',
  collected_amount: 0,
  paid_out_amount: 0,
  attempts: 0,
  due_date: '2026-11-30',
  target_pay_date: '2026-11-27',
  allow_post_due_date_deduction: false,
  metadata: { invoice: 'INV-2026-0042' },
  version: 1,
  created_at: exampleInstants.created,
  updated_at: exampleInstants.created,
  cancelled_at: null,
};

export const paymentResponseSchema = z
  .object({
    id: z.uuid(),
    mandate_id: z.uuid(),
    schedule_id: z.uuid().nullable(),
    instalment_number: z.number().int().nullable(),
    status: paymentStatusSchema,
    /**
     * Why the request is in its status where the status alone does not say; set when the lock refused
     * it (failed without payroll being asked: its amount is over the per-request limit).
     */
    status_reason: z.string().nullable(),
    /** Integer minor units, like every amount of a payment request. */
    amount: z.number().int(),
    currency: z.string(),
    collected_amount: z.number().int(),
    paid_out_amount: z.number().int(),
    attempts: z.number().int(),
    due_date: z.iso.date().nullable(),
    target_pay_date: z.iso.date(),
    allow_post_due_date_deduction: z.boolean(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    version: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    cancelled_at: z.iso.datetime().nullable(),
  })
  .meta({
    id: 'PaymentResponse',
    description: "A payment request: one deduction asked of one pay date of the employee's payroll, on a mandate. Amounts are integer minor units.",
    example: paymentExample,
  });

export type PaymentResource = z.infer<typeof paymentResponseSchema>;

export const paymentEnvelopeSchema = z
  .object({ payment: paymentResponseSchema })
  .meta({ id: 'PaymentEnvelope', description: 'One payment request.', example: { payment: paymentExample } });
export const paymentCancelResponseSchema = z.object({ payment: paymentResponseSchema }).meta({
  id: 'PaymentCancelResponse',
  description: 'The payment request, now cancelled.',
  example: { payment: { ...paymentExample, status: 'cancelled', version: 2, updated_at: exampleInstants.updated, cancelled_at: exampleInstants.updated } },
});
export const paymentDeleteResponseSchema = z.object({ payment: paymentResponseSchema }).meta({
  id: 'PaymentDeleteResponse',
  description:
    'The payment request, now cancelled: deleting a payment request ends it as revoking ends a mandate. It is kept, with its events, ' +
    'and still answers GET /payments/{payment_id}.',
  example: { payment: { ...paymentExample, status: 'cancelled', version: 2, updated_at: exampleInstants.updated, cancelled_at: exampleInstants.updated } },
});
export const paymentsPageSchema = z.object({ payments: z.array(paymentResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'GetPaymentsPagedResponse',
  description: 'A page of payment requests, newest first.',
  example: { payments: [paymentExample], paging: pagingExample },
});

/** A stored payment request. */
export type PaymentRow = Selectable<PaymentRequestsTable>;

/** The API's view of a payment request; also the `data` of its events, so webhooks match GETs. */
export function toPaymentResource(row: PaymentRow): PaymentResource {
  return {
    id: row.id,
    mandate_id: row.mandate_id,
    schedule_id: row.schedule_id,
    instalment_number: row.instalment_number,
    status: row.status,
    status_reason: row.status_reason,
    amount: row.amount,
    currency: row.currency,
    collected_amount: row.collected_amount,
    paid_out_amount: row.paid_out_amount,
    attempts: row.attempts,
    due_date: row.due_date,
    target_pay_date: row.target_pay_date,
    allow_post_due_date_deduction: row.allow_post_due_date_deduction,
    metadata: (row.metadata ?? null) as Record<string, unknown> | null,
    version: row.version,
    created_at: isoInstant(row.created_at),
    updated_at: isoInstant(row.updated_at),
    cancelled_at: row.cancelled_at === null ? null : isoInstant(row.cancelled_at),
  };
}
