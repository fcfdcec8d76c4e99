import { z } from 'zod';
import { serviceToday } from '../../../directory/calendars/lock-date.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';
import { pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { currencySchema, isoDateSchema, metadataSchema, minorUnitsSchema, uuidSchema } from '../../../platform/shared/schemas.ts';
import { amountLimitsOf } from '../../../collections/payments/amount-limits.ts';
import {
  paymentCancelResponseSchema,
  paymentDeleteResponseSchema,
  paymentEnvelopeSchema,
  paymentsPageSchema,
  type PaymentResource,
} from '../../../collections/payments/payment-resource.ts';
import { createPaymentRequest, DEFAULT_CURRENCY, getPayment, listPaymentResources } from '../../../collections/payments/payment-service.ts';
import { cancelPaymentRequestAndSettle } from '../../../collections/schedules/schedule-service.ts';
import { PAYMENT_STATUSES } from '../../../collections/payments/payment-transitions.ts';

const paymentRecordSchema = z
  .strictObject({
    mandate_id: uuidSchema,
    amount: minorUnitsSchema,
    due_date: isoDateSchema.nullable().optional(),
    currency: currencySchema.nullable().default(DEFAULT_CURRENCY),
    metadata: metadataSchema.nullable().optional(),
    allow_post_due_date_deduction: z.boolean().default(false),
  })
  .meta({
    id: 'PaymentRecordRequest',
    description:
      'One deduction to ask for: `amount` in integer minor units (2500 is GBP 25.00), on an active mandate. `due_date` is the ' +
      "latest pay date it may be deducted on, unless `allow_post_due_date_deduction`; `currency` defaults to GBP and must be the mandate's.",
    example: {
      mandate_id: exampleIds.mandate,
      amount: 2500,
      due_date: '2026-11-30',
      currency: 'GBP',
      metadata: { invoice: 'INV-2026-0042' },
      allow_post_due_date_deduction: false,
    },
  });

const createPaymentBody = z.strictObject({ payment_record: paymentRecordSchema }).meta({
  id: 'PaymentRequestCreation',
  description: 'The payment request to create.',
  example: { payment_record: { mandate_id: exampleIds.mandate, amount: 2500, due_date: '2026-11-30' } },
});

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const paymentParams = z.strictObject({ payment_id: z.string() });

const listPaymentsQuery = pagingQuerySchema.extend({
  status: z.enum(PAYMENT_STATUSES).optional(),
  mandate_id: uuidSchema.optional(),
  target_pay_date: isoDateSchema.optional(),
  schedule_id: uuidSchema.optional(),
});

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

function paymentCreated(payment: PaymentResource) {
  return { status: 201, headers: { location: `/payments/${payment.id}` }, body: { payment } };
}

export const registerPaymentRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/payments',
    operationId: 'create_new_payment_request',
    summary: 'Create a payment request',
    description:
      "Asks for one deduction of `amount` (minor units) from the employee's pay, on an active mandate of the " +
      "caller. It is targeted at the first pay date of the employee's payroll that is still open (its lock date " +
      'after today) and on or before `due_date`; with `allow_post_due_date_deduction`, a later pay date is ' +
      'accepted when none before the due date is open. The answer names the target pay date; events report what ' +
      'happens to it next. An amount over the per-request limit, or one that would take the mandate over its ' +
      'limit for that pay date, is refused with the problem type `amount-over-limit`.',
    tags: ['Payments'],
    auth: { kind: 'both', scope: 'payments:write', roles: ['biller'] },
    idempotencyKey: 'required',
    body: createPaymentBody,
    responses: {
      201: { description: 'Payment request created', schema: paymentEnvelopeSchema },
      404: { description: 'Mandate not found', ...problem },
      422: {
        description:
          'Mandate not active, currency mismatch, due date unreachable, or an amount over a limit ' +
          '(type amount-over-limit: MAX_PAYMENT_AMOUNT_MINOR per request, MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR per mandate and pay date)',
        ...problem,
      },
    },
    responseInWrite: true,
    effect: async (ctx, trx, storeResponse) => {
      const record = ctx.body.payment_record;
      const input = {
        billerClientId: ctx.caller.clientId,
        today: serviceToday(new Date(), deps.config.SERVICE_TIME_ZONE),
        limits: amountLimitsOf(deps.config),
        record: {
          mandate_id: record.mandate_id,
          amount: record.amount,
          due_date: record.due_date ?? null,
          currency: record.currency ?? DEFAULT_CURRENCY,
          metadata: record.metadata ?? null,
          allow_post_due_date_deduction: record.allow_post_due_date_deduction,
        },
      };
      const payment = await createPaymentRequest(trx, input, storeResponse && ((created) => storeResponse(paymentCreated(created))));
      return paymentCreated(payment);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/payments/:payment_id/cancel',
    operationId: 'cancel_payment_request',
    summary: 'Cancel a payment request',
    description:
      'Cancels a payment request that payroll has not been instructed to deduct yet. Cancelling one already ' +
      'cancelled answers the same again; once its pay date is locked and instructed, it can no longer be ' +
      'cancelled (409). Cancelling the last instalment of a schedule that could still collect settles the schedule ' +
      '(a `schedule.updated` event).',
    tags: ['Payments'],
    auth: { kind: 'both', scope: 'payments:write', roles: ['biller'] },
    idempotencyKey: 'optional',
    params: paymentParams,
    responses: {
      200: { description: 'Cancelled (or already cancelled)', schema: paymentCancelResponseSchema },
      404: { description: 'Payment not found', ...problem },
      409: { description: 'Already instructed to payroll', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { payment: await cancelPaymentRequestAndSettle(trx, ctx.caller.clientId, ctx.params.payment_id) },
    }),
  });

  // DELETE is the interface document's name for ending a payment request, answered the way DELETE
  // /mandates/{id} answers: the resource is ended, not erased, and a repeat answers the same.
  defineRoute(app, {
    method: 'DELETE',
    url: '/payments/:payment_id',
    operationId: 'delete_payment_request',
    summary: 'Delete a payment request',
    description:
      'Ends a payment request that payroll has not been instructed to deduct yet, exactly as POST /payments/{payment_id}/cancel does: ' +
      'it becomes `cancelled` (a `payment_request.updated` event) and is kept, as a revoked mandate is. Deleting one already cancelled ' +
      'answers the same and changes nothing; once its pay date is locked and instructed it can no longer be ended (409). Deleting the ' +
      'last instalment of a schedule that could still collect settles the schedule (a `schedule.updated` event).',
    tags: ['Payments'],
    auth: { kind: 'both', scope: 'payments:write', roles: ['biller'] },
    params: paymentParams,
    responses: {
      200: { description: 'Deleted: cancelled now, or already', schema: paymentDeleteResponseSchema },
      404: { description: 'Payment not found', ...problem },
      409: { description: 'Already instructed to payroll', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { payment: await deps.db.transaction().execute((trx) => cancelPaymentRequestAndSettle(trx, ctx.caller.clientId, ctx.params.payment_id)) },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payments/:payment_id',
    operationId: 'get_payment',
    summary: 'Get a payment request',
    description: 'A payment request of the caller, with its status, target pay date and the amounts collected and paid out ' + 'so far.',
    tags: ['Payments'],
    auth: { kind: 'both', scope: 'payments:read', roles: ['biller'] },
    params: paymentParams,
    responses: {
      200: { description: 'The payment request', schema: paymentEnvelopeSchema },
      404: { description: 'Payment not found', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { payment: await getPayment(deps.db, ctx.caller.clientId, ctx.params.payment_id) },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payments',
    operationId: 'get_payments',
    summary: 'List payment requests',
    description: "The caller's payment requests, newest first, one page at a time; filter by status, mandate, target pay " + 'date or schedule.',
    tags: ['Payments'],
    auth: { kind: 'both', scope: 'payments:read', roles: ['biller'] },
    query: listPaymentsQuery,
    responses: { 200: { description: 'A page of payment requests', schema: paymentsPageSchema } },
    handler: async (ctx) => {
      const { status, mandate_id, target_pay_date, schedule_id, ...paging } = ctx.query;
      return {
        status: 200,
        body: await listPaymentResources(deps.db, ctx.caller.clientId, { status, mandateId: mandate_id, targetPayDate: target_pay_date, scheduleId: schedule_id }, paging),
      };
    },
  });
};
