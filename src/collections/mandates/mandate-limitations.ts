import type { MandateStatus, PaymentStatus } from '../../platform/db/tables.ts';
import { MANDATE_LIFECYCLE } from './mandate-transitions.ts';
import { requestOrder, type RequestOrderKey } from '../payments/request-order.ts';

// A mandate's limitations (`mandate_record.limitations`) as the lock applies them when it locks a
// pay date. The lock statement (src/cycle/snapshots/pay-date-lock-statement-repository.ts) executes these
// rules set-based, in SQL, for every mandate of a payroll at once; the functions here state each rule
// on its own. What can be data is defined once, here, and the statement renders it as SQL
// (MANDATE_STATUS_COLLECTING, MANDATE_VALIDITY, MANDATE_USAGE_OWED_STATUSES, REQUEST_ORDER and
// MANDATE_STATUSES_ENDING_COLLECTION); the arithmetic of rules 2 to 4 is written in both languages,
// and test/cycle/snapshots/lock-mandate-limitations.test.ts checks the statement against the functions.
//
//  1. mandateCollectableOn: only an active mandate valid on the pay date (valid_from and valid_to
//     inclusive, null meaning open-ended) has its requests asked of payroll; the others wait, pending.
//  2. mandateUsage: what counts against a lifetime max_total_amount.
//  3. mandateCapOnPayDate: how much the mandate may still ask on this pay date.
//  4. capMandateRequests: how that room is shared between the mandate's requests (due-date order).
//  5. statusLeftOutOfRerun: where a request the superseded snapshot instructed goes when a re-run no
//     longer asks for it (by rules 1 to 4): pending, or cancelled when its mandate has ended.
//
// The requests that compete for a mandate's room on a pay date are the lock's to choose: pending
// ones aimed at it or an earlier pay date and within the per-request amount limit, and on a re-run
// those the superseded snapshot asked for that are still owed (what the pay date already reconciled
// is kept as it was asked and counts as `alreadyAsked`).

export interface MandateLimitations {
  /** Minor units; null: only the service's per-pay-date limit applies. */
  readonly maxAmountPerPayDate: number | null;
  /** Minor units over the mandate's life; null: no lifetime ceiling. */
  readonly maxTotalAmount: number | null;
  /** 'YYYY-MM-DD', inclusive; null: valid from the start. */
  readonly validFrom: string | null;
  /** 'YYYY-MM-DD', inclusive; null: valid with no end. */
  readonly validTo: string | null;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// As in allocateDeduction: an offset-less timestamp would be read in the process's time zone.
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

function assertDate(value: string | null, what: string): void {
  if (value !== null && !ISO_DATE.test(value)) throw new RangeError(`${what} must be YYYY-MM-DD, got ${JSON.stringify(value)}`);
}

function assertAmount(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative integer of minor units, got ${String(value)}`);
}

function assertLimit(value: number | null, what: string): void {
  // The columns' checks: a stated limit is positive.
  if (value !== null && (!Number.isSafeInteger(value) || value <= 0)) {
    throw new RangeError(`${what} must be a positive integer of minor units or null, got ${String(value)}`);
  }
}

/**
 * A mandate's validity as data: each bound, the mandates column that stores it, and how it must
 * compare with the pay date (`bound <= pay date`: inclusive); a null bound is open. mandateValidOn
 * reads it, and the lock's statement renders the same bounds as SQL.
 */
export const MANDATE_VALIDITY = [
  { bound: 'validFrom', column: 'valid_from', holds: '<=' },
  { bound: 'validTo', column: 'valid_to', holds: '>=' },
] as const satisfies ReadonlyArray<{ bound: keyof MandateLimitations; column: string; holds: '<=' | '>=' }>;

/** The one status in which a mandate's requests are asked of payroll (mandateCollectableOn). */
export const MANDATE_STATUS_COLLECTING: MandateStatus = 'active';

/**
 * Whether the pay date falls within the mandate's validity: on or after valid_from and on or before
 * valid_to, each bound inclusive and open when null. It is the pay date that counts (the day payroll
 * deducts), not the day of the lock or a request's due date.
 */
export function mandateValidOn(mandate: Pick<MandateLimitations, 'validFrom' | 'validTo'>, payDate: string): boolean {
  assertDate(payDate, 'payDate');
  assertDate(mandate.validFrom, 'validFrom');
  assertDate(mandate.validTo, 'validTo');
  return MANDATE_VALIDITY.every(({ bound, holds }) => {
    const value = mandate[bound];
    // YYYY-MM-DD strings order as the dates do.
    return value === null || (holds === '<=' ? value <= payDate : value >= payDate);
  });
}

/**
 * Whether the lock asks payroll for the mandate's requests on this pay date: the mandate is active
 * (suspended, pending enablement and every ended status ask nothing; their pending requests wait) and
 * valid on the pay date.
 */
export function mandateCollectableOn(mandate: Pick<MandateLimitations, 'validFrom' | 'validTo'> & { readonly status: string }, payDate: string): boolean {
  return mandateValidOn(mandate, payDate) && mandate.status === MANDATE_STATUS_COLLECTING;
}

export interface MandateRequestState {
  readonly id: string;
  readonly status: PaymentStatus;
  readonly amount: number;
  readonly collectedAmount: number;
}

/**
 * The statuses of a mandate's requests whose amount still owed counts against its lifetime
 * max_total_amount (mandateUsage): asked of payroll on another pay date and not settled yet. Read by
 * mandateUsage and by the lock's statement.
 */
export const MANDATE_USAGE_OWED_STATUSES: readonly PaymentStatus[] = ['instructed'];

/**
 * What a mandate has used of its lifetime max_total_amount when a pay date is locked: everything
 * collected on any of its requests (whatever their status now, cancelled included), plus what is
 * still owed of requests another pay date has instructed and not settled. The requests competing for
 * this pay date (`competing`) count only what they collected: what they still owe is what the cap is
 * about to decide. Pending requests not on this pay date, and partly collected or failed ones, count
 * what they collected and nothing more.
 *
 * A bigint: a mandate's requests together may pass the exact-integer range of a number.
 */
export function mandateUsage(requests: ReadonlyArray<MandateRequestState>, competing: ReadonlySet<string>): bigint {
  let used = 0n;
  for (const request of requests) {
    assertAmount(request.amount, `amount of ${request.id}`);
    assertAmount(request.collectedAmount, `collected amount of ${request.id}`);
    if (request.collectedAmount > request.amount) throw new RangeError(`collected amount of ${request.id} exceeds its amount`);
    used += BigInt(request.collectedAmount);
    if (MANDATE_USAGE_OWED_STATUSES.includes(request.status) && !competing.has(request.id)) used += BigInt(request.amount - request.collectedAmount);
  }
  return used;
}

export interface PayDateCapContext {
  /** MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: applies to every mandate, like its own per-pay-date limit. */
  readonly serviceMaxPerPayDate: number;
  /**
   * What this pay date has already asked of the mandate and no longer decides: on a re-run, the
   * requests it has reconciled (kept exactly as they were asked). 0 on a first lock.
   */
  readonly alreadyAsked: number;
  /** mandateUsage of the mandate. */
  readonly used: bigint;
}

/**
 * How much one mandate may still ask of payroll on a pay date: the smaller of its per-pay-date room
 * (the lower of its own max_amount_per_pay_date and the service's limit, less what the pay date has
 * already asked of it) and its lifetime room (max_total_amount less mandateUsage). Never negative:
 * a mandate past a limit asks nothing.
 */
export function mandateCapOnPayDate(mandate: Pick<MandateLimitations, 'maxAmountPerPayDate' | 'maxTotalAmount'>, on: PayDateCapContext): number {
  assertLimit(mandate.maxAmountPerPayDate, 'maxAmountPerPayDate');
  assertLimit(mandate.maxTotalAmount, 'maxTotalAmount');
  assertLimit(on.serviceMaxPerPayDate, 'serviceMaxPerPayDate');
  assertAmount(on.alreadyAsked, 'alreadyAsked');
  if (on.used < 0n) throw new RangeError(`used must not be negative, got ${on.used}`);
  const perPayDate = Math.min(mandate.maxAmountPerPayDate ?? on.serviceMaxPerPayDate, on.serviceMaxPerPayDate) - on.alreadyAsked;
  let cap = BigInt(perPayDate);
  if (mandate.maxTotalAmount !== null) {
    const lifetime = BigInt(mandate.maxTotalAmount) - on.used;
    if (lifetime < cap) cap = lifetime;
  }
  return cap > 0n ? Number(cap) : 0;
}

export interface CompetingRequest {
  readonly id: string;
  /** What is still owed: amount less what earlier attempts collected. */
  readonly remaining: number;
  /** 'YYYY-MM-DD'; null sorts last. */
  readonly dueDate: string | null;
  /**
   * ISO 8601 timestamp with an offset; compared as an instant, to the millisecond (the database keeps
   * microseconds: two requests created within one millisecond are ordered there, tied here).
   */
  readonly createdAt: string;
}

export interface CappedRequest {
  id: string;
  /** What payroll is asked for it on this pay date; 0: it is left out and waits for a later one. */
  requested: number;
}

interface OrderKey extends RequestOrderKey {
  readonly remaining: number;
}

function toOrderKey(request: CompetingRequest): OrderKey {
  assertAmount(request.remaining, `remaining amount of ${request.id}`);
  assertDate(request.dueDate, `dueDate of ${request.id}`);
  const createdAtMs = ISO_TIMESTAMP.test(request.createdAt) ? Date.parse(request.createdAt) : Number.NaN;
  if (Number.isNaN(createdAtMs)) {
    throw new RangeError(`createdAt of ${request.id} must be an ISO 8601 timestamp with an offset, got ${JSON.stringify(request.createdAt)}`);
  }
  return { id: request.id, dueDate: request.dueDate, createdAtMs, remaining: request.remaining };
}

/**
 * Shares a mandate's cap on a pay date between its competing requests, most urgent first (earliest
 * due date, none last, then oldest, then id): each is asked for what it still owes while the cap
 * lasts, the one that reaches the cap for what is left of it, and the rest for nothing (they stay
 * pending for a later pay date). Returned in that order, one entry per request.
 */
export function capMandateRequests(cap: number, requests: ReadonlyArray<CompetingRequest>): CappedRequest[] {
  assertAmount(cap, 'cap');
  const seen = new Set<string>();
  for (const request of requests) {
    if (seen.has(request.id)) throw new RangeError(`payment request ${request.id} appears more than once`);
    seen.add(request.id);
  }
  let left = cap;
  return requests
    .map(toOrderKey)
    .sort(requestOrder)
    .map(({ id, remaining }) => {
      const requested = Math.min(remaining, left);
      left -= requested;
      return { id, requested };
    });
}

/**
 * Mandate statuses that end collection for good: the terminal ones (revoked, cancelled, expired,
 * failed). Every path into one cancels the mandate's pending requests (revokeMandate, employment changes).
 */
export const MANDATE_STATUSES_ENDING_COLLECTION: readonly MandateStatus[] = MANDATE_LIFECYCLE.statuses.filter((status) => MANDATE_LIFECYCLE.isTerminal(status));

/**
 * Where a re-run moves a request the superseded snapshot had instructed for the pay date (and the pay
 * date has not reconciled) when the new version no longer asks for it: it leaves `instructed`, since
 * nothing would ever settle it there and lifetime caps would go on counting it. It goes back to
 * pending, as a carried shortfall does, to be asked for on a later pay date; when its mandate has
 * ended it is then cancelled, as the ending cancelled the mandate's other pending requests. A suspended
 * mandate's request waits, pending, like its other pending ones. Partly collected requests are not
 * left out: the re-run carries them.
 */
export function statusLeftOutOfRerun(mandateStatus: MandateStatus): 'pending' | 'cancelled' {
  return MANDATE_STATUSES_ENDING_COLLECTION.includes(mandateStatus) ? 'cancelled' : 'pending';
}
