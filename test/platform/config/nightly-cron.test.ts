import { getNextMillis } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/platform/config/config.ts';
import { nextCronFireAfter } from '../../../src/platform/config/cron.ts';

// Beside the unit project's configuration tests: this one asks BullMQ itself, which unit tests do not load.
describe('NIGHTLY_CRON', () => {
  it('read NIGHTLY_CRON as the job scheduler does: what BullMQ would refuse is refused at start-up, what it runs is accepted', () => {
    const patterns = ['0 1 * * *', '30 23 * * 1-5', '*/15 * * * *', '0 0 1 1 *', '0 0 29 2 *', '0 0 30 2 *', '61 * * * *', '0 25 * * *', 'every night', '* * * * * * *'];
    for (const pattern of patterns) {
      let schedulerRuns: boolean;
      try {
        schedulerRuns = getNextMillis(Date.now(), { pattern }) !== undefined;
      } catch {
        schedulerRuns = false;
      }
      const accepted = (() => {
        try {
          parseConfig({ NIGHTLY_CRON: pattern });
          return true;
        } catch (error) {
          if (error instanceof ConfigError) return false;
          throw error;
        }
      })();
      expect(accepted, pattern).toBe(schedulerRuns);
    }
    expect(() => parseConfig({ NIGHTLY_CRON: '0 0 30 2 *' })).toThrow('NIGHTLY_CRON is not a cron pattern');
  });

  it('computes the next run as the scheduler does, in the service time zone, and refuses what it refuses', () => {
    const after = Date.UTC(2026, 2, 28, 23, 30); // the night the clocks go forward in Europe/London
    for (const timeZone of ['Europe/London', 'UTC', 'America/New_York']) {
      for (const pattern of ['0 1 * * *', '30 1 * * *', '0 5 * * *', '*/15 * * * *', '0 0 29 2 *']) {
        expect(nextCronFireAfter(pattern, timeZone, after), `${pattern} ${timeZone}`).toBe(getNextMillis(after, { pattern, tz: timeZone }));
      }
    }
    for (const pattern of ['61 * * * *', 'every night']) {
      expect(() => getNextMillis(after, { pattern })).toThrow();
      expect(() => nextCronFireAfter(pattern, 'UTC', after)).toThrow();
    }
  });
});
