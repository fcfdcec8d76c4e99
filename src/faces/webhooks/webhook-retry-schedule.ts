import { DELIVERY_ATTEMPTS, HOUR, RETRY_SCHEDULE_MS, SECOND } from '../../platform/queue/job-catalogue.ts';

export { DELIVERY_ATTEMPTS, RETRY_SCHEDULE_MS };

/** Spreads retries ±10% so endpoints that failed together do not all come back in one burst. */
export const RETRY_JITTER = 0.1;

/** A receiver may ask us to wait (Retry-After), but not longer than the schedule's longest step. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

export interface RetryDelayInput {
  /** 1 for the first attempt of the delivery that failed, 2 for the second, ... */
  failedAttempt: number;
  /** What the receiver's Retry-After asked for, if anything. */
  retryAfterMs: number | null;
  /** Multiplies the schedule (1 in production; tests run it in milliseconds). Retry-After is not scaled. */
  scale: number;
  /** A number in [0, 1): Math.random in production, fixed in tests. */
  random: number;
}

/** How long to wait before the next attempt: the jittered schedule step, but never less than Retry-After. */
export function retryDelayMs(input: RetryDelayInput): number {
  const step = RETRY_SCHEDULE_MS[Math.min(Math.max(input.failedAttempt, 1), RETRY_SCHEDULE_MS.length) - 1]!;
  const jittered = step * input.scale * (1 + RETRY_JITTER * (2 * input.random - 1));
  const asked = Math.min(input.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  // Zero would mean "retry at once" to the queue and -1 "never"; one millisecond is the shortest real wait.
  return Math.max(1, Math.round(jittered), asked);
}

/**
 * Retry-After (RFC 9110 section 10.2.3): delay-seconds or an HTTP-date, as milliseconds from `now`;
 * null when absent or unreadable (then the schedule alone decides).
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * SECOND;
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}
