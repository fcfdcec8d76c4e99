import type { ConsoleRole } from '../../platform/db/tables.ts';

export const consoleRoles = ['operator', 'finance', 'viewer'] as const satisfies readonly ConsoleRole[];
export type { ConsoleRole };

/** What a console user can do beyond reading; every signed-in user reads every page. */
export type ConsoleAction =
  /** Re-run a payroll pay date. */
  | 'rerun'
  /** Retry a failed job, and act on the queues board. */
  | 'retry_job'
  /** Queue a webhook event's deliveries again. */
  | 'redeliver_webhook'
  /** Record a payout as paid or failed at the bank. */
  | 'settle_payout'
  /** Download a payout bank file: it holds account numbers. */
  | 'download_bank_file'
  /** Upload a bank statement (its credits are matched by the rules). */
  | 'import_statement'
  /** Match a bank credit to remittances by hand, or take a match back. */
  | 'match_credit'
  /** Import a payroll's deduction return file as its pay date's confirmation. */
  | 'import_deduction_return';

const permitted: Record<ConsoleRole, ReadonlySet<ConsoleAction>> = {
  operator: new Set<ConsoleAction>(['rerun', 'retry_job', 'redeliver_webhook', 'download_bank_file', 'import_statement', 'match_credit', 'import_deduction_return']),
  finance: new Set<ConsoleAction>(['settle_payout', 'download_bank_file', 'import_statement', 'match_credit']),
  viewer: new Set<ConsoleAction>(),
};

/** Operators run the batch, finance settles money, both bring cash in and match it, viewers look. */
export function consolePermits(role: ConsoleRole, action: ConsoleAction): boolean {
  return permitted[role].has(action);
}
