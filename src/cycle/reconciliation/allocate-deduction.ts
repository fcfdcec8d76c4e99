// What payroll deducted from one employee on one pay date is a single number, while the employee may owe
// several payment requests on that pay date (several billers, instalments, carried shortfalls). This
// decides who gets what, and it must be deterministic: a re-run or a later push version re-allocates,
// and the ledger only nets to the right figure if the same inputs always give the same split.

import { requestOrder, type RequestOrderKey } from '../../collections/payments/request-order.ts';

export interface DeductionRequest {
  readonly id: string;
  /** Minor units the employee was asked to pay towards this request on this pay date. */
  readonly requested: number;
  /** 'YYYY-MM-DD'; null sorts last, because a request without a due date is the least urgent. */
  readonly dueDate: string | null;
  /** ISO 8601 timestamp of the request's creation. */
  readonly createdAt: string;
}

export interface DeductionAllocation {
  id: string;
  allocated: number;
  shortfall: number;
}

export interface DeductionAllocationResult {
  /** In allocation order, which is the order payment requests were served. */
  allocations: DeductionAllocation[];
  /** Deducted beyond everything requested: an over-deduction the caller reports, never pays out. */
  unallocated: number;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
// The offset is mandatory: Date.parse reads an offset-less timestamp in the process's time zone, which
// would make the order depend on where the code runs.
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/;

function assertAmount(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${what} must be a non-negative integer of minor units, got ${String(value)}`);
  }
}

interface SortKey extends RequestOrderKey {
  readonly requested: number;
}

function toSortKey(request: DeductionRequest): SortKey {
  assertAmount(request.requested, `requested amount of ${request.id}`);
  if (request.dueDate !== null && !ISO_DATE.test(request.dueDate)) {
    throw new RangeError(`dueDate of ${request.id} must be YYYY-MM-DD or null, got ${JSON.stringify(request.dueDate)}`);
  }
  const createdAtMs = ISO_TIMESTAMP.test(request.createdAt) ? Date.parse(request.createdAt) : Number.NaN;
  if (Number.isNaN(createdAtMs)) {
    throw new RangeError(`createdAt of ${request.id} must be an ISO 8601 timestamp with an offset, got ${JSON.stringify(request.createdAt)}`);
  }
  return { id: request.id, dueDate: request.dueDate, createdAtMs, requested: request.requested };
}

/** Splits an employee's deducted amount across their payment requests, most urgent first. */
export function allocateDeduction(deducted: number, requests: ReadonlyArray<DeductionRequest>): DeductionAllocationResult {
  assertAmount(deducted, 'deducted amount');
  const seen = new Set<string>();
  for (const request of requests) {
    // A duplicate id would make the split depend on input order and double-count one request.
    if (seen.has(request.id)) throw new RangeError(`payment request ${request.id} appears more than once`);
    seen.add(request.id);
  }

  const ordered = requests.map(toSortKey).sort(requestOrder);
  let remaining = deducted;
  const allocations = ordered.map(({ id, requested }) => {
    const allocated = Math.min(remaining, requested);
    remaining -= allocated;
    return { id, allocated, shortfall: requested - allocated };
  });
  return { allocations, unallocated: remaining };
}
