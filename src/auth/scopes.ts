import { z } from 'zod';
import type { ClientRole } from '../db/tables.ts';

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
  /** Sandbox billers only: drive a sandbox pay date through lock, provider pull, confirmation and payout. */
  'sandbox:simulate',
] as const;

export const scopeSchema = z.enum(scopes);
export type Scope = z.infer<typeof scopeSchema>;

/** What a new client of each role may ask for when `clients create` is not told otherwise. */
export const defaultScopesByRole: Record<ClientRole, readonly Scope[]> = {
  biller: [
    'availability:check',
    'mandates:write',
    'mandates:read',
    'payments:write',
    'payments:read',
    'payouts:read',
    'events:read',
    'webhooks:manage',
    'reports:read',
  ],
  payroll_provider: ['availability:check', 'deduction_data:request', 'deduction_data:submit', 'payroll_data:write'],
  operator: ['payouts:read', 'payouts:write', 'reports:read', 'admin:read', 'admin:write'],
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
