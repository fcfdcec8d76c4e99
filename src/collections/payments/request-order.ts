/** What decides which of a payroll's payment requests comes first when they compete for money. */
export interface RequestOrderKey {
  readonly id: string;
  readonly dueDate: string | null;
  /** Compared as instants so '...T10:00:00+01:00' and '...T09:30:00Z' order by time, not by text. */
  readonly createdAtMs: number;
}

/**
 * The order as data, most significant key first: the key of RequestOrderKey, the payment_requests
 * column it comes from, and whether it may be missing (a missing value sorts last, in SQL as here).
 * requestOrder compares by this list and the lock's statement orders by it (requestOrderSql in
 * src/cycle/snapshots/pay-date-lock-statement-repository.ts), so the two cannot order differently.
 */
export const REQUEST_ORDER = [
  { key: 'dueDate', column: 'due_date', nullable: true },
  { key: 'createdAtMs', column: 'created_at', nullable: false },
  { key: 'id', column: 'id', nullable: false },
] as const satisfies ReadonlyArray<{ key: keyof RequestOrderKey; column: string; nullable: boolean }>;

/**
 * Earliest due date first, null due dates last, then oldest, then id: the order in which requests
 * share a deduction (reconciliation) and a mandate's cap (the lock), as the SQL orders them. The id
 * only breaks exact ties, but without it two requests created in the same millisecond would split by
 * input order, which depends on how the database happened to return rows.
 */
export function requestOrder(a: RequestOrderKey, b: RequestOrderKey): number {
  for (const { key } of REQUEST_ORDER) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    // Dates as YYYY-MM-DD text, instants as numbers; ids in code-unit order (as uuids compare in
    // SQL), not localeCompare: the result must not depend on the locale.
    return x < y ? -1 : 1;
  }
  return 0;
}
