import { sql } from 'kysely';
import type { Executor } from '../../platform/db/connection.ts';
import type { DirectoryReach } from '../../platform/shared/caller.ts';

// Where a caller's reach (directoryReachOf) meets the database: the one predicate every read of the
// directory on a caller's behalf applies, so no query decides "live or sandbox" by itself again.

/**
 * The payroll providers a reach takes in, as a subquery for `where(<a provider id column>, 'in', ...)`:
 * every live provider for a live biller; the provider of the caller's own `sandboxes` row for a
 * sandbox biller (one at most: the column is unique, and a sandbox client without a sandbox reaches
 * none); the provider itself for a provider's client; none for `nothing`. Providers are few, so the
 * planner hashes the subquery once per statement.
 */
export function reachableProviderIds(db: Executor, reach: DirectoryReach) {
  const providers = db.selectFrom('payroll_providers').select('payroll_providers.id');
  switch (reach.kind) {
    case 'live':
      return providers.where('payroll_providers.sandbox', '=', false);
    case 'sandbox':
      // Still required to be a sandbox provider: a row naming a live one would not open live data.
      return providers
        .where('payroll_providers.sandbox', '=', true)
        .where(
          'payroll_providers.id',
          'in',
          db.selectFrom('sandboxes').select('sandboxes.payroll_provider_id').where('sandboxes.biller_client_id', '=', reach.sandboxBillerClientId),
        );
    case 'provider':
      return providers.where('payroll_providers.id', '=', reach.payrollProviderId);
    case 'nothing':
      return providers.where(sql<boolean>`false`);
  }
}
