import type { IncomingMessage } from 'node:http';

/** Long enough for a UUID, a W3C trace id or an AWS trace header; short enough for every log line. */
export const MAX_REQUEST_ID_LENGTH = 128;
const REQUEST_ID = /^[A-Za-z0-9._~:+/=-]+$/;

/**
 * The id every log line of a request carries: the caller's `x-request-id` when it is a plausible
 * id (at most 128 characters of letters, digits and `._~:+/=-`), so a trace can be followed across
 * services; otherwise a fresh UUID. A malformed id is not worth refusing a request over, but it is
 * never written into the logs (an 8 KB header in every line, or text that looks like other fields).
 */
export function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  const given = Array.isArray(header) ? undefined : header;
  return given !== undefined && given.length <= MAX_REQUEST_ID_LENGTH && REQUEST_ID.test(given) ? given : crypto.randomUUID();
}
