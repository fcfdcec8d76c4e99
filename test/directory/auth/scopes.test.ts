import { describe, expect, it } from 'vitest';
import { defaultScopesByRole, grantScopes, parseScopeString, scopeSchema, scopes } from '../../../src/directory/auth/scopes.ts';

describe('parseScopeString', () => {
  it('returns nothing for an absent or empty scope', () => {
    expect(parseScopeString(undefined)).toEqual([]);
    expect(parseScopeString('')).toEqual([]);
    expect(parseScopeString('   ')).toEqual([]);
  });

  it('splits on spaces, ignoring repeated separators', () => {
    expect(parseScopeString('payments:read  mandates:read ')).toEqual(['payments:read', 'mandates:read']);
  });

  it('drops repeats, keeping the first occurrence order', () => {
    expect(parseScopeString('a b a c b')).toEqual(['a', 'b', 'c']);
  });
});

describe('grantScopes', () => {
  const allowed = ['payments:read', 'payments:write', 'mandates:read'] as const;

  it('grants every client scope when none is requested', () => {
    expect(grantScopes(undefined, allowed)).toEqual([...allowed]);
    expect(grantScopes('', allowed)).toEqual([...allowed]);
    expect(grantScopes('  ', allowed)).toEqual([...allowed]);
  });

  it('returns a copy, not the client array itself', () => {
    const own = ['payments:read'];
    const granted = grantScopes(undefined, own);
    expect(granted).not.toBe(own);
  });

  it('grants exactly the requested subset', () => {
    expect(grantScopes('payments:read', allowed)).toEqual(['payments:read']);
    expect(grantScopes('mandates:read payments:read', allowed)).toEqual(['mandates:read', 'payments:read']);
  });

  it('grants a repeated scope once', () => {
    expect(grantScopes('payments:read payments:read', allowed)).toEqual(['payments:read']);
  });

  it('refuses a request with any scope the client does not hold', () => {
    expect(grantScopes('payments:read availability:check', allowed)).toBeNull();
    expect(grantScopes('payouts:write', allowed)).toBeNull();
    expect(grantScopes('not-a-scope', allowed)).toBeNull();
  });

  it('refuses everything for a client without scopes, unless nothing is asked', () => {
    expect(grantScopes('payments:read', [])).toBeNull();
    expect(grantScopes(undefined, [])).toEqual([]);
  });

  it('is case sensitive (scope tokens are opaque)', () => {
    expect(grantScopes('PAYMENTS:READ', allowed)).toBeNull();
  });
});

describe('scope catalogue', () => {
  it('contains the scopes of the salary-deduction interface', () => {
    for (const scope of ['availability:check', 'mandates:write', 'mandates:read', 'payments:write', 'payments:read', 'deduction_data:request']) {
      expect(scopes).toContain(scope);
    }
  });

  it('gives every role only known scopes by default', () => {
    for (const list of Object.values(defaultScopesByRole)) {
      for (const scope of list) expect(scopeSchema.safeParse(scope).success).toBe(true);
    }
    expect(defaultScopesByRole.payroll_provider).toContain('deduction_data:request');
    expect(defaultScopesByRole.biller).not.toContain('deduction_data:request');
  });
});
