import { describe, expect, it } from 'vitest';
import { DELIVERY_ATTEMPTS, MAX_RETRY_AFTER_MS, parseRetryAfter, RETRY_SCHEDULE_MS, retryDelayMs } from '../../../src/faces/webhooks/webhook-retry-schedule.ts';
import { webhookBackoffStrategy } from '../../../src/faces/webhooks/webhook-jobs.ts';
import { WebhookAttemptFailed, attemptVerdict } from '../../../src/faces/webhooks/webhook-delivery-service.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('retry schedule', () => {
  it('is the documented schedule: 5 s, 5 m, 30 m, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, so ten attempts', () => {
    expect(RETRY_SCHEDULE_MS).toEqual([5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR]);
    expect(DELIVERY_ATTEMPTS).toBe(10);
  });

  it('waits each step within ±10% jitter', () => {
    RETRY_SCHEDULE_MS.forEach((step, index) => {
      const at = (random: number) => retryDelayMs({ failedAttempt: index + 1, retryAfterMs: null, scale: 1, random });
      expect(at(0)).toBe(Math.round(step * 0.9));
      expect(at(0.5)).toBe(step);
      expect(at(0.999999)).toBeLessThanOrEqual(Math.round(step * 1.1));
      expect(at(0.999999)).toBeGreaterThan(step);
    });
  });

  it('stays on the last step past the end, and scales for tests', () => {
    expect(retryDelayMs({ failedAttempt: 42, retryAfterMs: null, scale: 1, random: 0.5 })).toBe(24 * HOUR);
    expect(retryDelayMs({ failedAttempt: 2, retryAfterMs: null, scale: 0.001, random: 0.5 })).toBe(300);
    expect(retryDelayMs({ failedAttempt: 1, retryAfterMs: null, scale: 0, random: 0.5 })).toBe(1);
  });

  it('never waits less than Retry-After asks, but at most a day', () => {
    expect(retryDelayMs({ failedAttempt: 1, retryAfterMs: 120_000, scale: 1, random: 0.5 })).toBe(120_000);
    expect(retryDelayMs({ failedAttempt: 2, retryAfterMs: 1_000, scale: 1, random: 0.5 })).toBe(5 * MINUTE);
    expect(retryDelayMs({ failedAttempt: 1, retryAfterMs: 7 * 24 * HOUR, scale: 1, random: 0.5 })).toBe(MAX_RETRY_AFTER_MS);
    // The scale shrinks our schedule, never the receiver's request.
    expect(retryDelayMs({ failedAttempt: 1, retryAfterMs: 2_000, scale: 0.0001, random: 0.5 })).toBe(2_000);
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2026-11-20T10:00:00Z');

  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Fri, 20 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Fri, 20 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter('1.5', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});

describe('webhookBackoffStrategy', () => {
  it('runs a delivery job again after an error of ours on the plain schedule; a failed attempt is retried by a later admission, not by its job', () => {
    const strategy = webhookBackoffStrategy(1, () => 0.5);
    expect(strategy(3, 'webhook-schedule', new Error('database went away'))).toBe(30 * MINUTE);
    // A delivery's last attempt fails its job for good: the queue does not retry an UnrecoverableError.
    const last = new WebhookAttemptFailed('attempt 10: HTTP 503', null, { final: true });
    expect(last.name).toBe('UnrecoverableError');
    expect(last).toBeInstanceOf(WebhookAttemptFailed);
    expect(new WebhookAttemptFailed('HTTP 503', 42_000).name).toBe('WebhookAttemptFailed');
  });
});

describe('attemptVerdict', () => {
  it('counts only 2xx as delivered and 410 as gone', () => {
    expect([200, 201, 204, 299].map(attemptVerdict)).toEqual(['success', 'success', 'success', 'success']);
    expect(attemptVerdict(410)).toBe('gone');
    expect([null, 199, 301, 304, 400, 404, 429, 500, 503].map(attemptVerdict)).toEqual(Array(9).fill('failure'));
  });
});
