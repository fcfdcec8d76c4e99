import { describe, expect, expectTypeOf, it } from 'vitest';
import type { ScheduleStatus as StoredScheduleStatus } from '../../../src/platform/db/tables.ts';
import { SCHEDULE_STATUSES } from '../../../src/collections/schedules/schedule-resource.ts';
import { canCancelSchedule } from '../../../src/collections/schedules/schedule-service.ts';
import { SCHEDULE_LIFECYCLE, type ScheduleStatus } from '../../../src/collections/schedules/schedule-transitions.ts';
import { InvalidStatusTransitionError } from '../../../src/platform/shared/status-transitions.ts';

// Rows: from. Columns: to, in this order. 1 = allowed. Written out by hand from what the code does
// (settling and the lock decide for active schedules only; a biller cancels active or errored ones),
// independently of the table in schedule-transitions.ts.
const COLUMNS = ['active', 'completed', 'cancelled', 'errored'] as const;
const EXPECTED: Record<ScheduleStatus, readonly (0 | 1)[]> = {
  //         act  comp canc err
  active: [0, 1, 1, 1],
  completed: [0, 0, 0, 0],
  cancelled: [0, 0, 0, 0],
  errored: [0, 0, 1, 0],
};

const PAIRS = COLUMNS.flatMap((from) => COLUMNS.map((to, column) => [from, to, EXPECTED[from][column] === 1] as const));

describe('schedule transitions', () => {
  it('status set matches the stored ScheduleStatus type and the expected table', () => {
    expectTypeOf<(typeof SCHEDULE_STATUSES)[number]>().toEqualTypeOf<StoredScheduleStatus>();
    expect([...SCHEDULE_LIFECYCLE.statuses].sort()).toEqual([...COLUMNS].sort());
    expect(Object.keys(SCHEDULE_LIFECYCLE.transitions).sort()).toEqual([...COLUMNS].sort());
    expect(PAIRS).toHaveLength(16);
  });

  it.each(PAIRS)('%s -> %s allowed: %s', (from, to, allowed) => {
    expect(SCHEDULE_LIFECYCLE.can(from, to)).toBe(allowed);
    if (allowed) expect(() => SCHEDULE_LIFECYCLE.assert(from, to)).not.toThrow();
    else expect(() => SCHEDULE_LIFECYCLE.assert(from, to)).toThrow(InvalidStatusTransitionError);
  });

  it('the error names the schedule and both ends', () => {
    expect(() => SCHEDULE_LIFECYCLE.assert('completed', 'cancelled')).toThrow('A schedule cannot move from completed to cancelled');
  });

  it('completed and cancelled are terminal', () => {
    expect(COLUMNS.filter(SCHEDULE_LIFECYCLE.isTerminal)).toEqual(['completed', 'cancelled']);
  });

  it('cancelling is what the table allows: active and errored schedules', () => {
    expect(COLUMNS.filter(canCancelSchedule)).toEqual(['active', 'errored']);
    expect(SCHEDULE_LIFECYCLE.fromStatuses('cancelled')).toEqual(['active', 'errored']);
  });

  it('settling decides only for active schedules', () => {
    expect(SCHEDULE_LIFECYCLE.fromStatuses(['errored', 'completed'])).toEqual(['active']);
  });
});
