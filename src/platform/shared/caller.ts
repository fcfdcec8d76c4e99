/** What kind of party a client is: the biller collecting, the payroll provider deducting, or our operator. */
export type ClientRole = 'biller' | 'payroll_provider' | 'operator';

/** Who is acting: the authenticated client a request acts for. */
export interface Caller {
  clientId: string;
  role: ClientRole;
  scopes: readonly string[];
  payrollProviderId: string | null;
  /**
   * A sandbox client (clients.sandbox): a sandbox biller sees only its own sandbox's provider's
   * employers, payrolls and employees (see directoryReachOf), and a live client never sees any
   * sandbox's. Absent means live.
   */
  sandbox?: boolean;
}

/**
 * Whose directory a caller reaches: which payroll providers, and with each its employers, payrolls,
 * employees and their availability. Each world is reached alone, as each tenant is: a live biller
 * every live provider (never a sandbox one); a sandbox biller only its own sandbox's simulated
 * provider (never a live one, nor another sandbox's: each sandbox is a world of its own); a payroll
 * provider only itself. `nothing` fails closed: an operator (who works through the admin routes, not
 * these), a provider client without a provider.
 */
export type DirectoryReach = { kind: 'live' } | { kind: 'sandbox'; sandboxBillerClientId: string } | { kind: 'provider'; payrollProviderId: string } | { kind: 'nothing' };

/**
 * A biller's reach from its client and mode (Caller.sandbox). The sandbox is named by its biller, not
 * by a flag: "any sandbox provider" would let one sandbox biller into another's world. Which provider
 * that is stays in the `sandboxes` row, read where the reach is applied (reachableProviderIds).
 */
export function billerReach(billerClientId: string, sandbox: boolean | undefined): DirectoryReach {
  return sandbox ? { kind: 'sandbox', sandboxBillerClientId: billerClientId } : { kind: 'live' };
}

export function directoryReachOf(caller: Caller): DirectoryReach {
  switch (caller.role) {
    case 'biller':
      return billerReach(caller.clientId, caller.sandbox);
    case 'payroll_provider':
      return caller.payrollProviderId ? { kind: 'provider', payrollProviderId: caller.payrollProviderId } : { kind: 'nothing' };
    case 'operator':
      return { kind: 'nothing' };
  }
}
