/** What decides which of a payroll's payment requests comes first when they compete for money. */
export interface RequestOrderKey {
  readonly id: string;
  readonly dueDate: string | null;
  /** Compared as instants so '...T10:00:00+01:00' and '...T09:30:00Z' order by time, not by text. */
  readonly createdAtMs: number;
}

/**
 * Earliest due date first, null due dates last, then oldest, then id: the order in which requests
 * share a deduction (reconciliation) and a mandate's cap (the lock), as the SQL orders them. The id
 * only breaks exact ties, but without it two requests created in the same millisecond would split by
 * input order, which depends on how the database happened to return rows.
 */
export function requestOrder(a: RequestOrderKey, b: RequestOrderKey): number {
  if (a.dueDate !== b.dueDate) {
    if (a.dueDate === null) return 1;
    if (b.dueDate === null) return -1;
    return a.dueDate < b.dueDate ? -1 : 1;
  }
  if (a.createdAtMs !== b.createdAtMs) return a.createdAtMs - b.createdAtMs;
  // Code-unit order (as uuids compare in SQL), not localeCompare: the result must not depend on the locale.
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  return 0;
}
