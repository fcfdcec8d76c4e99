import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { PayoutItemsTable, PayoutsTable } from '../../platform/db/tables.ts';
import { toMajorUnits } from '../../platform/money/major-units.ts';
import { paymentInformationSchema } from '../../directory/payroll-providers/reference-schemas.ts';
import { exampleIds } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';

export const PAYOUT_STATUSES = ['pending', 'paid', 'failed'] as const;
export const payoutStatusSchema = z.enum(PAYOUT_STATUSES).meta({
  id: 'PayoutStatus',
  description: '`pending` until an operator records the bank transfer as `paid`, or as `failed` (its payments are then paid out again).',
  example: 'paid',
});

const payoutItemExamples = [
  { payment_request_id: exampleIds.payment, kind: 'payment_collected', amount: 2500 },
  { payment_request_id: exampleIds.secondPayment, kind: 'payment_collected', amount: 5000 },
];

/** The example every payout view of /openapi.json shows: two collections, GBP 75.00 in all. */
const payoutExample = {
  id: exampleIds.payout,
  status: 'paid',
  currency: 'GBP',
  amount: 7500,
  payout_date: '2026-11-30',
  reference: 'PO2611300193A4F55E',
  payment_information: {
    payment_reference: 'PO2611300193A4F55E',
    payment_amount: 75,
    payment_account: { account_number: '31926819', sort_code: '60-16-13', account_holder_name: 'Northwind Lending Ltd' },
  },
  items: payoutItemExamples,
  created_at: '2026-11-30T06:00:12.530Z',
  paid_at: '2026-11-30T11:42:08.771Z',
  failed_at: null,
  failure_reason: null,
  version: 2,
};

export const payoutItemSchema = z
  .object({
    payment_request_id: z.uuid(),
    kind: z.enum(['payment_collected', 'collection_reversed']),
    /** Signed integer minor units: collections add to the payout, reversals take away. */
    amount: z.number().int(),
  })
  .meta({
    id: 'PayoutPaymentRequestItem',
    description: 'What one payment request adds to a payout (a collection) or takes from it (a reversal), in signed integer minor units.',
    example: payoutItemExamples[0],
  });

export const payoutResponseSchema = z
  .object({
    id: z.uuid(),
    status: payoutStatusSchema,
    currency: z.string(),
    /** Integer minor units: the net of the items. */
    amount: z.number().int(),
    payout_date: z.iso.date(),
    reference: z.string(),
    /** The bank transfer to the biller's beneficiary account; payment_amount in major units. */
    payment_information: paymentInformationSchema,
    /** On GET /payouts/{id}; lists leave items out, since one payout can carry thousands. */
    items: z.array(payoutItemSchema).optional(),
    created_at: z.iso.datetime(),
    paid_at: z.iso.datetime().nullable(),
    failed_at: z.iso.datetime().nullable(),
    failure_reason: z.string().nullable(),
    version: z.number().int(),
    /** Operators' views only: they see many billers' payouts. */
    biller_client_id: z.uuid().optional(),
  })
  .meta({
    id: 'PayoutResponse',
    description:
      "A transfer of collected money to the biller's beneficiary account: the net of its items, in integer minor units, with " +
      'the bank transfer to make (in major units) and the reference it carries.',
    example: payoutExample,
  });

export type PayoutResource = z.infer<typeof payoutResponseSchema>;

export const payoutEnvelopeSchema = z
  .object({ payout: payoutResponseSchema })
  .meta({ id: 'PayoutEnvelope', description: 'One payout with its items.', example: { payout: payoutExample } });
export const payoutsPageSchema = z.object({ payouts: z.array(payoutResponseSchema), paging: pagingResponseSchema }).meta({
  id: 'ListPayoutsResponse',
  description: 'A page of payouts, newest first, without their items.',
  example: { payouts: [{ ...payoutExample, items: undefined }], paging: pagingExample },
});

export type PayoutRow = Selectable<PayoutsTable>;
export type PayoutItemRow = Pick<Selectable<PayoutItemsTable>, 'payment_request_id' | 'kind' | 'amount'>;

/** The API's view of a payout; with `items` for the single-payout view (and payout events). */
export function toPayoutResource(row: PayoutRow, items?: readonly PayoutItemRow[]): PayoutResource {
  return {
    id: row.id,
    status: row.status,
    currency: row.currency,
    amount: row.amount,
    payout_date: row.payout_date,
    reference: row.reference,
    payment_information: {
      payment_reference: row.reference,
      payment_amount: toMajorUnits(row.amount, row.currency),
      payment_account: {
        account_number: row.account_number,
        sort_code: row.sort_code,
        account_holder_name: row.account_holder_name,
      },
    },
    ...(items ? { items: items.map((item) => ({ payment_request_id: item.payment_request_id, kind: item.kind, amount: item.amount })) } : {}),
    created_at: isoInstant(row.created_at),
    paid_at: row.paid_at === null ? null : isoInstant(row.paid_at),
    failed_at: row.failed_at === null ? null : isoInstant(row.failed_at),
    failure_reason: row.failure_reason,
    version: row.version,
  };
}
