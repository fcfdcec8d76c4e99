import { describe, expect, it } from 'vitest';
import type { NightlySummary } from '../../../src/cycle/nightly/nightly-service.ts';
import { formatNightlySummary } from '../../../src/faces/cli/nightly-command.ts';

const PAYROLL = '11111111-1111-4111-8111-111111111111';
const summary: NightlySummary = {
  runId: 'run-1',
  runDate: '2026-11-27',
  trigger: 'manual',
  triggeredBy: 'ops',
  startedAt: '2026-11-27T01:00:00.000Z',
  finishedAt: '2026-11-27T01:00:02.500Z',
  pairs: 3,
  payrollsLocked: 1,
  alreadyLocked: 0,
  pending: 0,
  employees: 10,
  paymentsInstructed: 12,
  totalsByCurrency: { GBP: 314_200n },
  failures: [{ payrollId: PAYROLL, payroll: 'Acme Ltd: Monthly', payDate: '2026-11-30', reason: 'the database went away mid-lock' }],
  skipped: [{ payrollId: '22222222-2222-4222-8222-222222222222', payroll: null, payDate: '2026-12-04', reason: 'not ready: the employer has not opted in (pending)' }],
};

describe('the nightly summary the command prints', () => {
  it('names the payroll of a failed pay date, with its id for support, and says the money in words', () => {
    const text = formatNightlySummary(summary);
    expect(text).toContain(`  ! Acme Ltd: Monthly (payroll ${PAYROLL}), pay date 2026-11-30: the database went away mid-lock`);
    // A payroll whose name was not looked up keeps its id alone.
    expect(text).toContain('  - payroll 22222222-2222-4222-8222-222222222222, pay date 2026-12-04 skipped, not ready: the employer has not opted in (pending)');
    expect(text).toMatch(/Total GBP\s+£3,142\.00/);
  });
});
