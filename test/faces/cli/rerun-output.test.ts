import { describe, expect, it } from 'vitest';
import { formatRerunResult } from '../../../src/faces/cli/deductions-commands.ts';
import type { RerunResult } from '../../../src/faces/workers/rerun-runner.ts';

const result: RerunResult = {
  rerunId: 'r-1',
  payrollId: 'p-1',
  payDate: '2026-11-27',
  previousSnapshotId: 's-1',
  snapshotId: 's-2',
  snapshotVersion: 2,
  instructionFile: 'PR1-2026-11-27-v2.csv',
  requests: [
    { reason: 'employer fixed a reference', requestedBy: 'alice', requestedAt: '2026-11-23T10:00:00.000Z' },
    { reason: 'late payment', requestedBy: 'bob', requestedAt: '2026-11-23T10:00:01.000Z' },
  ],
  created: true,
  joined: true,
};

describe('deductions rerun output', () => {
  it('says a request joined another and names every requester and reason', () => {
    expect(formatRerunResult(result).split('\n')).toEqual([
      'Joined re-run r-1 (1 other request for payroll p-1 pay date 2026-11-27)',
      '  requested by alice at 2026-11-23T10:00:00.000Z: employer fixed a reference',
      '  requested by bob at 2026-11-23T10:00:01.000Z: late payment',
      '  snapshot s-1 superseded by s-2 (version 2)',
      '  instruction file PR1-2026-11-27-v2.csv',
    ]);
  });

  it('a re-run this request opened', () => {
    const opened = formatRerunResult({ ...result, joined: false, requests: result.requests.slice(0, 1) });
    expect(opened.split('\n')[0]).toBe('Re-run r-1 of payroll p-1 pay date 2026-11-27');
  });
});
