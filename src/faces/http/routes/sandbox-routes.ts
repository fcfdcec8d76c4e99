import { z } from 'zod';
import { deductionDataResponseSchema } from '../../../cycle/deduction-data/deduction-data-resource.ts';
import { amountLimitsOf } from '../../../collections/payments/amount-limits.ts';
import { reportedLimitsOf } from '../../../cycle/deduction-records/reported-limits.ts';
import {
  sandboxConfirmationRequestSchema,
  sandboxConfirmationResponseSchema,
  sandboxLockEnvelopeSchema,
  sandboxPayoutResponseSchema,
} from '../../sandbox/sandbox-resource.ts';
import { simulateConfirmation, simulateLock, simulatePayout, simulateProviderPull, type SimulationDeps } from '../../sandbox/sandbox-simulation-service.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';

// The simulation operations of sandbox mode: a sandbox biller drives its sandbox payroll's pay date
// through lock, provider pull, confirmation and payout without waiting for the calendar. Only sandbox
// billers hold the sandbox:simulate scope (a live client is refused with 403); a live client given it
// anyway finds no sandbox (404), as it finds no sandbox payroll.

// Unknown or malformed ids and dates are 404s, as for any id in a path.
const payDateParams = z.strictObject({ payroll_id: z.string(), pay_date: z.string() });

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const simulate = { kind: 'both', scope: 'sandbox:simulate', roles: ['biller'] } as const;
const refusals = {
  400: { description: 'Idempotency-Key missing or not a UUID', ...problem },
  403: { description: 'Without the sandbox:simulate scope (live clients)', ...problem },
} as const;

export const registerSandboxRoutes: RouteModule = (app, deps) => {
  const simulation: SimulationDeps = {
    db: deps.db,
    adapterFor: deps.adapterFor,
    limits: amountLimitsOf(deps.config),
    reportedLimits: reportedLimitsOf(deps.config),
    timeZone: deps.config.SERVICE_TIME_ZONE,
    settlementDelayWorkingDays: deps.config.SETTLEMENT_DELAY_WORKING_DAYS,
    payoutFunding: deps.config.PAYOUT_FUNDING,
  };

  defineRoute(app, {
    method: 'POST',
    url: '/sandbox/payrolls/:payroll_id/pay-dates/:pay_date/lock',
    operationId: 'sandbox_lock_pay_date',
    summary: 'Sandbox: lock a pay date now',
    description:
      'Sandbox: lock a pay date now (pay_date YYYY-MM-DD, or `next` for the first open one), locking its deduction data and instruction file as the nightly lock does',
    tags: ['Sandbox'],
    auth: simulate,
    params: payDateParams,
    idempotencyKey: 'required',
    responses: {
      200: { description: 'Locked now, or found locked (created false)', schema: sandboxLockEnvelopeSchema },
      ...refusals,
      404: { description: 'Not a payroll of your sandbox (or you have no sandbox), or no such pay date', ...problem },
      409: { description: '`next` asked, and the calendar has no open pay date left', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { lock: await simulateLock(simulation, trx, ctx.caller, ctx.params.payroll_id, ctx.params.pay_date) },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/sandbox/payrolls/:payroll_id/pay-dates/:pay_date/provider-pull',
    operationId: 'sandbox_provider_pull',
    summary: 'Sandbox: the provider pulls deduction data',
    description: "Sandbox: the simulated payroll provider requests a locked pay date's deduction data, and you see what it got",
    tags: ['Sandbox'],
    auth: simulate,
    params: payDateParams,
    idempotencyKey: 'required',
    responses: {
      200: { description: 'The deduction data, as the provider receives it (amounts in major units)', schema: deductionDataResponseSchema },
      ...refusals,
      404: { description: 'Not a payroll of your sandbox (or you have no sandbox), or no such pay date', ...problem },
      409: { description: 'The pay date is not locked yet', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await simulateProviderPull(simulation, trx, ctx.caller, ctx.params.payroll_id, ctx.params.pay_date),
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/sandbox/payrolls/:payroll_id/pay-dates/:pay_date/confirmation',
    operationId: 'sandbox_confirm_pay_date',
    summary: 'Sandbox: payroll confirms its deductions',
    description: 'Sandbox: the simulated payroll confirms what it deducted per employee (full, partial or leaver; full unless told), then the pay date is reconciled at once',
    tags: ['Sandbox'],
    auth: simulate,
    params: payDateParams,
    body: sandboxConfirmationRequestSchema,
    idempotencyKey: 'required',
    responses: {
      200: { description: 'The confirmation and the reconciliation that followed', schema: sandboxConfirmationResponseSchema },
      ...refusals,
      404: { description: 'Not a payroll of your sandbox (or you have no sandbox), or no such pay date', ...problem },
      409: { description: 'The pay date is not locked yet, or its deduction data asks for nothing', ...problem },
      422: { description: 'Invalid body, or outcomes for employees not in the deduction data', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: await simulateConfirmation(
        simulation,
        trx,
        ctx.caller,
        { payrollId: ctx.params.payroll_id, payDate: ctx.params.pay_date },
        { defaultOutcome: ctx.body?.default_outcome ?? 'full', outcomes: ctx.body?.outcomes ?? {} },
      ),
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/sandbox/payouts',
    operationId: 'sandbox_pay_out',
    summary: 'Sandbox: pay out now',
    description: "Sandbox: pay out your sandbox's collected money now (the payout run for you alone, on the date it would have run) and mark the payouts paid",
    tags: ['Sandbox'],
    auth: simulate,
    idempotencyKey: 'required',
    responses: {
      200: { description: 'The payouts made, marked paid', schema: sandboxPayoutResponseSchema },
      ...refusals,
      404: { description: 'You have no sandbox (a live client)', ...problem },
      409: { description: 'Nothing collected is waiting for a payout', ...problem },
    },
    effect: async (ctx, trx) => ({ status: 200, body: await simulatePayout(simulation, trx, ctx.caller) }),
  });
};
