/** What kind of party a client is: the biller collecting, the payroll provider deducting, or our operator. */
export type ClientRole = 'biller' | 'payroll_provider' | 'operator';

/** Who is acting: the authenticated client a request acts for. */
export interface Caller {
  clientId: string;
  role: ClientRole;
  scopes: readonly string[];
  payrollProviderId: string | null;
  /**
   * A sandbox client (clients.sandbox): it sees only sandbox providers' employers, payrolls and
   * employees, and a live client never sees those. Absent means live.
   */
  sandbox?: boolean;
}
