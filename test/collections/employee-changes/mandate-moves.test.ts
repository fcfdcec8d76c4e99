import { describe, expect, it } from 'vitest';
import { MANDATE_STATUSES, canTransitionMandate } from '../../../src/collections/mandates/mandate-transitions.ts';
import { endsCollection, mandateMovesForEmploymentStatus } from '../../../src/collections/employee-changes/mandate-moves.ts';

const summary = (status: 'active' | 'leaver' | 'unknown') => Object.fromEntries(mandateMovesForEmploymentStatus(status).map((m) => [m.from, m.to]));

describe('mandateMovesForEmploymentStatus', () => {
  it('ends every running mandate of a leaver; one still pending enablement fails', () => {
    expect(summary('leaver')).toEqual({ active: 'expired', suspended: 'expired', pending_enablement: 'failed' });
    expect(mandateMovesForEmploymentStatus('leaver').every((m) => m.reason === 'employment ended')).toBe(true);
  });

  it('suspends active mandates when payroll no longer knows the employee', () => {
    expect(summary('unknown')).toEqual({ active: 'suspended' });
  });

  it('resumes suspended mandates when the employee is active again', () => {
    expect(summary('active')).toEqual({ suspended: 'active' });
    expect(mandateMovesForEmploymentStatus('active')[0]!.reason).toBeNull();
  });

  it('never proposes a move the mandate state machine forbids, nor moves a terminal mandate', () => {
    for (const status of ['active', 'leaver', 'unknown'] as const) {
      for (const move of mandateMovesForEmploymentStatus(status)) {
        expect(canTransitionMandate(move.from, move.to)).toBe(true);
        expect(['revoked', 'cancelled', 'expired', 'failed']).not.toContain(move.from);
      }
    }
  });
});

describe('endsCollection', () => {
  it('is true exactly for the statuses an employment change ends a mandate with', () => {
    expect(MANDATE_STATUSES.filter(endsCollection)).toEqual(['expired', 'failed']);
  });
});
