import { describe, expect, it } from 'vitest';
import { enablementDecision } from '../../../src/collections/enablement/enablement-decision.ts';

const base = { employmentStatus: 'active', employerOptIn: 'opted_in', mandateCurrency: 'GBP', payrollCurrency: 'GBP' } as const;

describe('enablementDecision', () => {
  it('enables an active employment at an opted-in employer in the payroll currency', () => {
    expect(enablementDecision(base)).toEqual({ status: 'enabled', reason: null });
  });

  it('rejects leavers and employees payroll does not know as active', () => {
    expect(enablementDecision({ ...base, employmentStatus: 'leaver' })).toMatchObject({ status: 'rejected', reason: expect.stringContaining('left') });
    expect(enablementDecision({ ...base, employmentStatus: 'unknown' })).toMatchObject({ status: 'rejected' });
  });

  it('rejects an employer that opted out, and a mandate in another currency', () => {
    expect(enablementDecision({ ...base, employerOptIn: 'opted_out' })).toMatchObject({ status: 'rejected', reason: expect.stringContaining('opted out') });
    expect(enablementDecision({ ...base, mandateCurrency: 'EUR' })).toMatchObject({ status: 'rejected', reason: expect.stringContaining('EUR') });
  });

  it('waits for an employer that has not decided yet', () => {
    expect(enablementDecision({ ...base, employerOptIn: 'pending' })).toMatchObject({ status: 'pending', reason: expect.stringContaining('opted in') });
  });

  it('lets a definite no win over waiting for the employer', () => {
    expect(enablementDecision({ ...base, employerOptIn: 'pending', employmentStatus: 'leaver' }).status).toBe('rejected');
  });
});
