import { describe, expect, it } from 'vitest';
import { nextNightlyRunAt } from '../../../src/cycle/nightly/next-nightly-run.ts';

// Tuesday 24 November 2026. The run is due at the pattern's local time in the service time zone,
// whatever that is in UTC on the day.
const cases: Array<{ rule: string; cron: string; timeZone: string; now: string; due: string }> = [
  { rule: 'later today: the coming 01:00', cron: '0 1 * * *', timeZone: 'Europe/London', now: '2026-11-24T15:00:00Z', due: '2026-11-25T01:00:00.000Z' },
  { rule: 'one second before: the same night', cron: '0 1 * * *', timeZone: 'Europe/London', now: '2026-11-25T00:59:59Z', due: '2026-11-25T01:00:00.000Z' },
  { rule: 'at the very instant: the next night, not again now', cron: '0 1 * * *', timeZone: 'Europe/London', now: '2026-11-25T01:00:00Z', due: '2026-11-26T01:00:00.000Z' },
  { rule: 'summer time: 01:00 BST is midnight UTC', cron: '0 1 * * *', timeZone: 'Europe/London', now: '2026-07-01T12:00:00Z', due: '2026-07-02T00:00:00.000Z' },
  {
    rule: 'clocks go forward over 01:00: the run moves to 02:00 BST',
    cron: '0 1 * * *',
    timeZone: 'Europe/London',
    now: '2026-03-28T12:00:00Z',
    due: '2026-03-29T01:00:00.000Z',
  },
  { rule: 'clocks go back: the first 01:00 (BST), once', cron: '0 1 * * *', timeZone: 'Europe/London', now: '2026-10-24T12:00:00Z', due: '2026-10-25T00:00:00.000Z' },
  {
    rule: 'weekdays only: Friday afternoon waits for Monday',
    cron: '30 2 * * 1-5',
    timeZone: 'America/New_York',
    now: '2026-11-27T12:00:00Z',
    due: '2026-11-30T07:30:00.000Z',
  },
  { rule: 'over the new year', cron: '0 1 * * *', timeZone: 'UTC', now: '2026-12-31T23:00:00Z', due: '2027-01-01T01:00:00.000Z' },
];

describe('nextNightlyRunAt', () => {
  it.each(cases)('$rule', ({ cron, timeZone, now, due }) => {
    expect(nextNightlyRunAt(cron, timeZone, new Date(now))?.toISOString()).toBe(due);
  });
});
