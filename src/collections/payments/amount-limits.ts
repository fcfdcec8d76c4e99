import { DEFAULT_MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR, DEFAULT_MAX_PAYMENT_AMOUNT_MINOR, type Config } from '../../platform/config/config.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import { InvalidError, type FieldError } from '../../platform/shared/domain-errors.ts';

// Service-wide ceilings on what billers may ask for. Without them one biller could put amounts
// whose totals leave the range the rest of the pipeline carries exactly (a pay date's total in the
// data response is a JSON number; node-pg refuses int8 values past 2^53), and so stop the lock of
// a payroll every other biller's payments share. Both are in minor units of the request's currency.

export interface AmountLimits {
  /** MAX_PAYMENT_AMOUNT_MINOR: the most one payment request or schedule instalment may be. */
  maxPaymentAmount: number;
  /**
   * MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: the most one mandate may ask of payroll on one pay date,
   * all its payment requests targeted at that pay date together (what is still owed of each).
   */
  maxMandateAmountPerPayDate: number;
}

export const DEFAULT_AMOUNT_LIMITS: AmountLimits = Object.freeze({
  maxPaymentAmount: DEFAULT_MAX_PAYMENT_AMOUNT_MINOR,
  maxMandateAmountPerPayDate: DEFAULT_MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR,
});

export function amountLimitsOf(config: Pick<Config, 'MAX_PAYMENT_AMOUNT_MINOR' | 'MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR'>): AmountLimits {
  return {
    maxPaymentAmount: config.MAX_PAYMENT_AMOUNT_MINOR,
    maxMandateAmountPerPayDate: config.MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR,
  };
}

export const PAYMENT_LIMIT_NAME = 'MAX_PAYMENT_AMOUNT_MINOR';
export const MANDATE_PAY_DATE_LIMIT_NAME = 'MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR';

/** An amount (at `pointer` in the request body) over the per-request limit. */
export interface PaymentAmountOverLimit {
  pointer: string;
  amount: number;
}

/** The amounts of one request body (a payment, or a schedule's instalments) that are over the per-request limit. */
export function paymentAmountsOverLimit(amounts: ReadonlyArray<{ pointer: string; amount: number }>, limits: AmountLimits): PaymentAmountOverLimit[] {
  return amounts.filter(({ amount }) => amount > limits.maxPaymentAmount);
}

/** A pay date on which a mandate would ask for more than the per-pay-date limit. */
export interface PayDateOverLimit {
  payDate: string;
  /** What the mandate's pending payment requests already ask on that pay date. */
  alreadyRequested: bigint;
  /** What this request body adds to it. */
  added: bigint;
  pointers: string[];
}

/**
 * The pay dates a new request body (one payment, or a schedule's instalments) would take over the
 * mandate's per-pay-date limit, given what the mandate's pending requests already ask on each.
 * Exact at any size: stored amounts may predate the limit.
 */
export function payDatesOverMandateLimit(
  additions: ReadonlyArray<{ payDate: string; amount: number; pointer: string }>,
  alreadyRequestedByPayDate: ReadonlyMap<string, bigint>,
  limits: AmountLimits,
): PayDateOverLimit[] {
  const byPayDate = new Map<string, { added: bigint; pointers: string[] }>();
  for (const { payDate, amount, pointer } of additions) {
    const entry = byPayDate.get(payDate) ?? { added: 0n, pointers: [] };
    entry.added += BigInt(amount);
    if (!entry.pointers.includes(pointer)) entry.pointers.push(pointer);
    byPayDate.set(payDate, entry);
  }
  const over: PayDateOverLimit[] = [];
  for (const [payDate, { added, pointers }] of byPayDate) {
    const alreadyRequested = alreadyRequestedByPayDate.get(payDate) ?? 0n;
    if (alreadyRequested + added > BigInt(limits.maxMandateAmountPerPayDate)) over.push({ payDate, alreadyRequested, added, pointers });
  }
  return over.sort((a, b) => (a.payDate < b.payDate ? -1 : a.payDate > b.payDate ? 1 : 0));
}

/** 422 naming MAX_PAYMENT_AMOUNT_MINOR, with a field error per amount over it. */
export function paymentAmountOverLimitError(over: readonly PaymentAmountOverLimit[], limits: AmountLimits, currency: string): InvalidError {
  const limit = formatMoney(limits.maxPaymentAmount, currency);
  const errors: FieldError[] = over.map(({ pointer }) => ({ pointer, detail: `must be at most ${limit} (${PAYMENT_LIMIT_NAME})` }));
  const detail =
    over.length === 1
      ? `The amount ${formatMoney(over[0]!.amount, currency)} is more than ${limit}, the most a payment request may be`
      : `${over.length} amounts are more than ${limit}, the most a payment request may be`;
  return new InvalidError('amount-over-limit', detail, {
    errors,
    members: { limit: { name: PAYMENT_LIMIT_NAME, amount: limits.maxPaymentAmount, currency } },
  });
}

/** 422 naming MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR and each pay date it would be passed on. */
export function mandatePayDateOverLimitError(mandateId: string, over: readonly PayDateOverLimit[], limits: AmountLimits, currency: string): InvalidError {
  const money = (minor: number | bigint) => formatMoney(minor, currency);
  const limit = money(limits.maxMandateAmountPerPayDate);
  const describe = (o: PayDateOverLimit) => `on pay date ${o.payDate} it already asks ${money(o.alreadyRequested)} and this would add ${money(o.added)}`;
  const errors: FieldError[] = over.flatMap((o) =>
    o.pointers.map((pointer) => ({
      pointer,
      detail: `the mandate may ask at most ${limit} on pay date ${o.payDate} (${MANDATE_PAY_DATE_LIMIT_NAME}); ${describe(o)}`,
    })),
  );
  return new InvalidError('amount-over-limit', `Mandate ${mandateId} may ask payroll for at most ${limit} on one pay date: ${over.map(describe).join('; ')}`, {
    errors,
    members: {
      limit: { name: MANDATE_PAY_DATE_LIMIT_NAME, amount: limits.maxMandateAmountPerPayDate, currency },
      // The amounts are in `detail` as exact decimals: a total of amounts stored before the limit
      // existed may be past what a JSON number holds exactly.
      pay_dates_over_limit: over.map((o) => o.payDate),
    },
  });
}
