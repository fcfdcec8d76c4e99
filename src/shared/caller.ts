import type { ClientRole } from '../db/tables.ts';

/** Who is acting: the authenticated client a request acts for. */
export interface Caller {
  clientId: string;
  role: ClientRole;
  scopes: readonly string[];
  payrollProviderId: string | null;
}
