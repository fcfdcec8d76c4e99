import { z } from 'zod';
import { clientActor } from '../../audit/audit-service.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { NotFoundError } from '../../shared/domain-errors.ts';
import { pageOf, pagingQuerySchema } from '../../shared/paging.ts';
import { currencySchema, isUuid } from '../../shared/schemas.ts';
import { findPayout, listPayoutItems, listPayouts } from '../../payouts/payout-repository.ts';
import { markPayoutFailed, markPayoutPaid } from '../../payouts/payout-service.ts';
import { payoutEnvelopeSchema, payoutsPageSchema, payoutStatusSchema, toPayoutResource } from '../../payouts/payout-resource.ts';


// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const payoutParams = z.strictObject({ payout_id: z.string() });

const listPayoutsQuery = pagingQuerySchema.extend({
  status: payoutStatusSchema.optional(),
  currency: currencySchema.optional(),
});

const markFailedBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500) })
  .meta({
    id: 'MarkPayoutFailedRequest',
    description: 'Why the bank rejected the transfer; kept in the audit log and on the payout.',
    example: { reason: 'Returned by the bank: beneficiary account closed' },
  });

// Optional, so the call without a body keeps working; the reason is kept in the audit log, as the
// CLI's --reason is (e.g. the bank statement line that shows the transfer).
const markPaidBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500).optional() })
  .meta({
    id: 'MarkPayoutPaidRequest',
    description: 'Optionally, what shows the transfer was made (such as the bank statement line); kept in the audit log.',
    example: { reason: 'Statement line 2026-11-30 PO2611300193A4F55E' },
  })
  .optional();

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

export const registerPayoutRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/payouts/:payout_id',
    operationId: 'get_payout',
    summary: 'Get a payout',
    description: 'A payout to the caller with its items: the collections and reversals of each payment request it settles.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['biller'] },
    params: payoutParams,
    responses: {
      200: { description: 'The payout', schema: payoutEnvelopeSchema },
      404: { description: 'Payout not found', ...problem },
    },
    handler: async (ctx) => {
      const { payout_id: payoutId } = ctx.params;
      const payout = isUuid(payoutId) ? await findPayout(deps.db, ctx.caller.clientId, payoutId) : undefined;
      if (!payout) throw new NotFoundError(`Payout ${payoutId}`);
      const items = await listPayoutItems(deps.db, payout.id);
      return { status: 200, body: { payout: toPayoutResource(payout, items) } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payouts',
    operationId: 'list_payouts',
    summary: 'List payouts',
    description:
      "The caller's payouts, newest first, one page at a time; filter by status or currency. The items of a " +
      'payout are on `GET /payouts/{payout_id}`.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['biller'] },
    query: listPayoutsQuery,
    responses: {
      200: { description: 'A page of payouts', schema: payoutsPageSchema },
    },
    handler: async (ctx) => {
      const { status, currency, ...paging } = ctx.query;
      const rows = await listPayouts(deps.db, ctx.caller.clientId, { status, currency }, paging);
      const { items, paging: page } = pageOf(rows, paging);
      return { status: 200, body: { payouts: items.map((row) => toPayoutResource(row)), paging: page } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/payouts/:payout_id/paid',
    operationId: 'mark_payout_paid',
    summary: 'Record a payout as paid',
    description:
      'Operators: the bank made the transfer, so the payout goes from `pending` to `paid`. A body is optional; ' +
      'its `reason` (such as the bank statement line) is kept in the audit log with the operator who called.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:write', roles: ['operator'] },
    params: payoutParams,
    body: markPaidBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The payout, now paid', schema: payoutEnvelopeSchema },
      404: { description: "Payout not found (a sandbox biller's payout is not live data: only the simulation settles it)", ...problem },
      409: { description: 'The payout is not pending', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: {
        payout: await markPayoutPaid(trx, ctx.params.payout_id, { actor: clientActor(ctx.caller.clientId), reason: ctx.body?.reason ?? null }),
      },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/payouts/:payout_id/failed',
    operationId: 'mark_payout_failed',
    summary: 'Record a payout as failed',
    description:
      'Operators: the bank rejected the transfer, so the payout goes from `pending` to `failed`, with the ' +
      'reason. Its payment requests are paid out again by the next payout run; the audit log records the ' +
      'operator and the reason.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:write', roles: ['operator'] },
    params: payoutParams,
    body: markFailedBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The payout, now failed', schema: payoutEnvelopeSchema },
      404: { description: "Payout not found (a sandbox biller's payout is not live data: only the simulation settles it)", ...problem },
      409: { description: 'The payout is not pending', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { payout: await markPayoutFailed(trx, ctx.params.payout_id, { actor: clientActor(ctx.caller.clientId), reason: ctx.body.reason }) },
    }),
  });
};
