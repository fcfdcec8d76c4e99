import { z } from 'zod';
import type { ClientRole } from '../../platform/db/tables.ts';

export const scopes = [
  'availability:check',
  'mandates:write',
  'mandates:read',
  'payments:write',
  'payments:read',
  'payouts:read',
  'payouts:write',
  'events:read',
  'webhooks:manage',
  'reports:read',
  'deduction_data:request',
  'deduction_data:submit',
  'payroll_data:write',
  /** Operators: see and manage clients (list; disable, enable, rotate secrets and API keys). */
  'admin:read',
  'admin:write',
  /** Operators: bank statements, remittances and their matches. */
  'cash:read',
  'cash:write',
  /** Sandbox billers only: drive a sandbox pay date through lock, provider pull, confirmation and payout. */
  'sandbox:simulate',
] as const;

export const scopeSchema = z.enum(scopes);
export type Scope = z.infer<typeof scopeSchema>;

/** What each scope allows, as the OAuth2 scheme of /openapi.json lists it; a new scope needs one. */
export const scopeDescriptions: Record<Scope, string> = {
  'availability:check': 'Check whether a person can pay by salary deduction; read payroll information',
  'mandates:write': 'Create and revoke mandates; ask payroll to enable them',
  'mandates:read': 'Read mandates',
  'payments:write': 'Create and cancel payment requests and schedules',
  'payments:read': 'Read payment requests and schedules',
  'payouts:read': 'Read payouts',
  'payouts:write': 'Operators: record a payout as paid or failed',
  'events:read': 'Read events',
  'webhooks:manage': 'Register, list, delete webhook endpoints and rotate their secrets',
  'reports:read': 'Download reconciliation reports',
  'deduction_data:request': 'Payroll providers: fetch deduction data and instruction files',
  'deduction_data:submit': 'Payroll providers: report the deductions made',
  'payroll_data:write': 'Payroll providers: create and replace employees on their payrolls',
  'admin:read': 'Operators: read the administration of the installation (clients, and the like)',
  'admin:write': 'Operators: change the administration of the installation (clients, and the like)',
  'cash:read': 'Operators: read bank statements, credits, remittances and their matches',
  'cash:write': 'Operators: import bank statements; match and unmatch credits by hand',
  'sandbox:simulate': 'Sandbox billers: drive a sandbox pay date through lock, provider pull, confirmation and payout',
};

/** What a new client of each role may ask for when `clients create` is not told otherwise. */
export const defaultScopesByRole: Record<ClientRole, readonly Scope[]> = {
  biller: ['availability:check', 'mandates:write', 'mandates:read', 'payments:write', 'payments:read', 'payouts:read', 'events:read', 'webhooks:manage', 'reports:read'],
  payroll_provider: ['availability:check', 'deduction_data:request', 'deduction_data:submit', 'payroll_data:write'],
  operator: ['payouts:read', 'payouts:write', 'reports:read', 'admin:read', 'admin:write', 'cash:read', 'cash:write'],
};

/** RFC 6749 scope strings are space-delimited; order and repeats carry no meaning. */
export function parseScopeString(scope: string | undefined): string[] {
  if (!scope) return [];
  return [...new Set(scope.split(' ').filter((part) => part.length > 0))];
}

/** Absent request means every scope the client holds; otherwise the request must be a subset. */
export function grantScopes(requested: string | undefined, allowed: readonly string[]): string[] | null {
  const asked = parseScopeString(requested);
  if (asked.length === 0) return [...allowed];
  return asked.every((scope) => allowed.includes(scope)) ? asked : null;
}
