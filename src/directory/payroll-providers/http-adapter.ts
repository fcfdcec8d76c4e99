import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { jsonPointer } from '../../platform/shared/json-pointer.ts';
import type { SecretBox } from '../../platform/shared/secret-box.ts';
import type { AdapterFactory, PayrollProviderAdapter, ProviderConnection } from './adapter.ts';
import { fetchPinned } from './pinned-fetch.ts';
import { openProviderClientSecret } from './provider-credentials.ts';
import { ProviderError, ProviderNotFoundError, type ProviderFailure } from './provider-errors.ts';
import { ProviderUrlRefused, unguardedProviderUrlPolicy, type ProviderUrlPolicy } from './provider-url-guard.ts';
import {
  employeePushResponseSchema,
  enablementResponseSchema,
  fullAvailabilityResponseSchema,
  lightAvailabilityResponseSchema,
  payrollScheduleResponseSchema,
} from './reference-schemas.ts';

/**
 * Where the reference operations live below a provider's api_base_url. The salary-deduction interface
 * shows only the full availability and employee push paths; the others mirror our own API, so a
 * provider implementing the reference interface and this service agree on one set of paths.
 */
export const providerPaths = {
  lightAvailability: '/deductions/availability/light',
  fullAvailability: '/deductions/availability/full',
  enablement: '/deductions/enablement',
  payrollInformation: (payrollId: string) => `/payrolls/${encodeURIComponent(payrollId)}`,
  employeePush: (payrollId: string) => `/deductions/payroll/${encodeURIComponent(payrollId)}`,
} as const;

export interface HttpAdapterOptions {
  /**
   * The time budget of one operation, in ms: every attempt, token request and back-off wait
   * included. A caller (an API request, a job holding a row lock) needs a bound on the whole call,
   * not on each attempt, so retries only happen while the budget lasts. Default 10000.
   */
  timeoutMs?: number;
  /** Attempts after the first, for failures that are safe to repeat. Default 3. */
  retries?: number;
  /**
   * Sends what the URL policy lets go to a URL as it is (private targets allowed). Calls to a
   * checked public address go through fetchPinned instead, which connects to that address.
   */
  fetch?: typeof fetch;
  /**
   * Which URLs may be called (https to public addresses unless PROVIDER_ALLOW_PRIVATE_URLS) and where
   * a call connects: providerUrlPolicy. Without one, unguardedProviderUrlPolicy (fails closed unless
   * the environment allows private URLs).
   */
  urls?: ProviderUrlPolicy;
  /** First back-off wait in ms; doubles per retry (capped at 5 s), with jitter. Default 200. */
  backoffBaseMs?: number;
  /** Opens the provider's sealed client secret (needed for any provider whose secret is sealed). */
  secrets?: SecretBox;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_RETRIES = 3;
const DEFAULT_BACKOFF_BASE_MS = 200;
const MAX_BACKOFF_MS = 5_000;
/** Used when a token response omits expires_in (RFC 6749 only recommends it). */
const DEFAULT_TOKEN_LIFETIME_SECONDS = 60;
/** Longest provider message quoted in a problem detail. */
const MAX_QUOTED_MESSAGE = 300;

/**
 * - 'repeatable': network errors, 408, 429 and 5xx are retried. For reads, availability checks
 *   (no side effects) and the employee push (the provider keeps the highest version, so a repeat
 *   of the same version is a no-op).
 * - 'unanswered-only': only failures without any HTTP answer are retried. For enablement, whose
 *   effect a 5xx may or may not have left behind at the provider.
 */
type RetryPolicy = 'repeatable' | 'unanswered-only';

interface Budget {
  signal: AbortSignal;
  deadline: number;
}

interface Exchange {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

const tokenResponseSchema = z.object({
  access_token: z.string().min(1),
  token_type: z.string().regex(/^bearer$/i, 'must be Bearer'),
  expires_in: z.number().int().positive().optional(),
});

function startBudget(timeoutMs: number): Budget {
  return { signal: AbortSignal.timeout(timeoutMs), deadline: performance.now() + timeoutMs };
}

const remainingMs = (budget: Budget) => budget.deadline - performance.now();

const isRetryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/** Retry-After is delta-seconds or an HTTP-date (RFC 9110 10.2.3). */
function retryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** application/x-www-form-urlencoded, as RFC 6749 2.3.1 requires before Basic encoding. */
const formEncode = (value: string) => encodeURIComponent(value).replaceAll('%20', '+');

/** The low-level reason of a failed fetch (ECONNREFUSED...), never its URL or headers. */
function networkReason(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' ? cause.code : 'connection failed';
}

function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 3).map((issue) => `${jsonPointer(issue.path) || '/'}: ${issue.message}`);
  const more = error.issues.length > 3 ? `; and ${error.issues.length - 3} more` : '';
  return shown.join('; ') + more;
}

/** A pending operation's identity, for error messages. */
interface CallContext {
  operation: string;
  /** Strings that must never appear in a problem detail (client secret, access tokens). */
  secrets: readonly string[];
}

/**
 * The adapter for a provider that implements the reference interface over HTTP.
 *
 * - Auth: OAuth 2.0 client credentials at api_token_url (client id and secret in HTTP Basic,
 *   grant_type in the form body); the token is cached until shortly before expires_in and fetched
 *   again once when the provider answers 401. No api_token_url: calls go without a token
 *   (a provider secured at the network level).
 * - Every POST carries an Idempotency-Key, one per operation call and the same on each retry, so
 *   a provider that honours the key (as the reference interface asks) never applies a repeat.
 * - Answers are validated with the reference schemas; anything else is a 502, never passed on.
 */
export function createHttpAdapter(connection: ProviderConnection, options: HttpAdapterOptions = {}): PayrollProviderAdapter {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const retries = options.retries ?? DEFAULT_RETRIES;
  const backoffBaseMs = options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS;
  const fetchImpl = options.fetch ?? fetch;
  const urlPolicy = options.urls ?? unguardedProviderUrlPolicy();
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be a positive integer, got ${timeoutMs}`);
  if (!Number.isSafeInteger(retries) || retries < 0) throw new RangeError(`retries must be a non-negative integer, got ${retries}`);
  if (!connection.api_base_url) {
    throw new TypeError(`Payroll provider ${connection.id} has no api_base_url; it is served by instruction files only`);
  }
  const providerId = connection.id;
  const baseUrl = connection.api_base_url.replace(/\/+$/, '');
  const tokenUrl = connection.api_token_url;
  const clientId = connection.api_client_id;
  const clientSecret = openProviderClientSecret(connection.api_client_secret, options.secrets, providerId);

  let cachedToken: { value: string; refreshAt: number } | undefined;
  let tokenRequest: Promise<string> | undefined;
  const issuedTokens: string[] = [];

  const secrets = (): string[] => [...(clientSecret ? [clientSecret] : []), ...issuedTokens];

  const fail = (context: CallContext, failure: ProviderFailure, detail: string, extra: { providerStatus?: number; cause?: unknown } = {}) =>
    new ProviderError({ failure, providerId, operation: context.operation, detail: redact(detail, context.secrets), ...extra });

  const timedOut = (context: CallContext, cause?: unknown) =>
    fail(context, 'timeout', `Payroll provider did not complete ${context.operation} within ${timeoutMs} ms`, { cause });

  function backoffMs(attempt: number): number {
    const ceiling = Math.min(MAX_BACKOFF_MS, backoffBaseMs * 2 ** attempt);
    // Equal jitter: at least half the ceiling, so waits still grow, while clients spread out.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /** Waits when the budget allows it; false when it would run past the deadline. */
  async function waitBeforeRetry(ms: number, budget: Budget): Promise<boolean> {
    if (ms >= remainingMs(budget)) return false;
    try {
      await sleep(ms, undefined, { signal: budget.signal });
      return true;
    } catch {
      return false;
    }
  }

  /** A DNS lookup has no signal of its own: the operation's deadline bounds it all the same. */
  async function withinBudget<T>(work: Promise<T>, budget: Budget, context: CallContext): Promise<T> {
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(timedOut(context));
      if (budget.signal.aborted) onAbort();
      else budget.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, aborted]);
    } finally {
      budget.signal.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Where an exchange may connect (the URL policy): a URL the policy refuses is never called, and
   * no credentials leave for it. Its detail names no URL or address: it may reach an API client.
   */
  async function checkedTarget(url: string, context: CallContext) {
    try {
      return await urlPolicy.target(url);
    } catch (error) {
      if (!(error instanceof ProviderUrlRefused)) throw error;
      throw fail(context, 'misconfigured', `Payroll provider's configured URL is refused for ${context.operation} (it must be https to a public address)`, {
        cause: error,
      });
    }
  }

  /**
   * Sends with retries under `policy` and returns the first answer that is final: a success, a
   * failure that is not retried, or the last retryable failure once retries or budget run out.
   * Every attempt connects to the address checked before the first.
   */
  async function send(exchange: Exchange, policy: RetryPolicy, budget: Budget, context: CallContext): Promise<Response> {
    const target = await withinBudget(checkedTarget(exchange.url, context), budget, context);
    const body = exchange.body === undefined ? {} : { body: exchange.body };
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response =
          target.address === null
            ? await fetchImpl(exchange.url, {
                method: exchange.method,
                headers: exchange.headers,
                ...body,
                signal: budget.signal,
                // A redirect would re-send credentials somewhere the provider row does not name.
                redirect: 'manual',
              })
            : // fetchPinned never follows a redirect either.
              await fetchPinned(exchange.url, { method: exchange.method, headers: exchange.headers, ...body, signal: budget.signal }, target.address);
      } catch (error) {
        if (budget.signal.aborted) throw timedOut(context, error);
        const unreachable = fail(context, 'unreachable', `Payroll provider could not be reached for ${context.operation} (${networkReason(error)})`, { cause: error });
        if (attempt < retries && (await waitBeforeRetry(backoffMs(attempt), budget))) continue;
        if (budget.signal.aborted) throw timedOut(context, error);
        throw unreachable;
      }
      if (policy === 'repeatable' && isRetryableStatus(response.status) && attempt < retries) {
        const wait = retryAfterMs(response.headers.get('retry-after')) ?? backoffMs(attempt);
        if (wait < remainingMs(budget)) {
          await discardBody(response);
          if (await waitBeforeRetry(wait, budget)) continue;
          throw timedOut(context);
        }
      }
      return response;
    }
  }

  async function readBody(response: Response, budget: Budget, context: CallContext): Promise<string> {
    try {
      return await response.text();
    } catch (error) {
      if (budget.signal.aborted) throw timedOut(context, error);
      throw fail(context, 'unreachable', `Payroll provider's answer to ${context.operation} broke off (${networkReason(error)})`, {
        providerStatus: response.status,
        cause: error,
      });
    }
  }

  function failureForStatus(status: number, body: string, context: CallContext, source: 'operation' | 'token'): ProviderError {
    const quoted = providerMessage(body);
    const who = source === 'token' ? "Payroll provider's token server" : 'Payroll provider';
    const what = source === 'token' ? `our client credentials (for ${context.operation})` : context.operation;
    const detail = `${who} answered ${status} to ${what}: ${quoted}`;
    if (status >= 300 && status < 400) {
      return fail(context, 'bad-response', `${who} answered ${what} with an unexpected redirect (${status})`, { providerStatus: status });
    }
    if (isRetryableStatus(status)) return fail(context, 'unavailable', detail, { providerStatus: status });
    if (source === 'token' && status >= 400) return fail(context, 'authentication-failed', detail, { providerStatus: status });
    if (status === 404) {
      return new ProviderNotFoundError({ providerId, operation: context.operation, detail: redact(detail, context.secrets), providerStatus: status });
    }
    if (status === 401 || status === 403) return fail(context, 'authentication-failed', detail, { providerStatus: status });
    if (status >= 400) return fail(context, 'rejected', detail, { providerStatus: status });
    return fail(context, 'bad-response', `${who} answered ${what} with an unexpected status ${status}`, { providerStatus: status });
  }

  function parseJson<T>(body: string, schema: z.ZodType<T>, status: number, context: CallContext, what: string): T {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw fail(context, 'bad-response', `Payroll provider's ${what} is not JSON`, { providerStatus: status });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw fail(context, 'bad-response', `Payroll provider's ${what} does not match the reference schema: ${describeIssues(parsed.error)}`, {
        providerStatus: status,
      });
    }
    return parsed.data;
  }

  async function requestToken(url: string, budget: Budget, context: CallContext): Promise<string> {
    if (!clientId || !clientSecret) {
      throw fail(context, 'misconfigured', 'The payroll provider has a token URL but no client credentials configured');
    }
    const response = await send(
      {
        url,
        method: 'POST',
        headers: {
          accept: 'application/json',
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`,
        },
        body: 'grant_type=client_credentials',
      },
      'repeatable', // a client credentials grant has no side effect worth guarding
      budget,
      context,
    );
    const body = await readBody(response, budget, context);
    if (response.status < 200 || response.status >= 300) throw failureForStatus(response.status, body, context, 'token');
    const token = parseJson(body, tokenResponseSchema, response.status, context, 'token response');
    const lifetimeMs = (token.expires_in ?? DEFAULT_TOKEN_LIFETIME_SECONDS) * 1000;
    // Renew a little early (a tenth of the lifetime, at most 30 s) so no request leaves with a
    // token that expires on the way.
    cachedToken = { value: token.access_token, refreshAt: performance.now() + lifetimeMs - Math.min(30_000, lifetimeMs / 10) };
    issuedTokens.push(token.access_token);
    if (issuedTokens.length > 2) issuedTokens.shift();
    return token.access_token;
  }

  async function currentToken(budget: Budget, context: CallContext): Promise<string | undefined> {
    if (tokenUrl === null || tokenUrl === '') return undefined;
    if (cachedToken && performance.now() < cachedToken.refreshAt) return cachedToken.value;
    // Concurrent calls share one token request instead of each asking for its own.
    tokenRequest ??= requestToken(tokenUrl, budget, context).finally(() => {
      tokenRequest = undefined;
    });
    return tokenRequest;
  }

  async function call<T>(spec: { operation: string; method: 'GET' | 'POST'; path: string; body?: unknown; schema: z.ZodType<T>; retry: RetryPolicy }): Promise<T> {
    const budget = startBudget(timeoutMs);
    const context: CallContext = { operation: spec.operation, secrets: secrets() };
    const idempotencyKey = spec.method === 'POST' ? randomUUID() : undefined;
    let renewedToken = false;
    for (;;) {
      const token = await currentToken(budget, context);
      const liveContext: CallContext = { ...context, secrets: secrets() };
      const response = await send(
        {
          url: baseUrl + spec.path,
          method: spec.method,
          headers: {
            accept: 'application/json',
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
          },
          ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        },
        spec.retry,
        budget,
        liveContext,
      );
      if (response.status === 401 && token !== undefined && !renewedToken) {
        // The provider may have revoked or rotated the token before its stated expiry: one fresh
        // token, one more try. A second 401 is a real authentication failure.
        await discardBody(response);
        if (cachedToken?.value === token) cachedToken = undefined;
        renewedToken = true;
        continue;
      }
      const body = await readBody(response, budget, liveContext);
      if (response.status < 200 || response.status >= 300) throw failureForStatus(response.status, body, liveContext, 'operation');
      return parseJson(body, spec.schema, response.status, liveContext, `${spec.operation} response`);
    }
  }

  return {
    lightAvailability: (request) =>
      call({
        operation: 'light availability',
        method: 'POST',
        path: providerPaths.lightAvailability,
        body: request,
        schema: lightAvailabilityResponseSchema,
        retry: 'repeatable',
      }),
    fullAvailability: (request) =>
      call({
        operation: 'full availability',
        method: 'POST',
        path: providerPaths.fullAvailability,
        body: request,
        schema: fullAvailabilityResponseSchema,
        retry: 'repeatable',
      }),
    enablement: (request) =>
      call({
        operation: 'enablement',
        method: 'POST',
        path: providerPaths.enablement,
        body: request,
        schema: enablementResponseSchema,
        retry: 'unanswered-only',
      }),
    payrollInformation: (payrollId) =>
      call({
        operation: 'payroll information',
        method: 'GET',
        path: providerPaths.payrollInformation(payrollId),
        schema: payrollScheduleResponseSchema,
        retry: 'repeatable',
      }),
    pushEmployeeDeduction: (payrollId, record) =>
      call({
        operation: 'employee deduction push',
        method: 'POST',
        path: providerPaths.employeePush(payrollId),
        body: record,
        schema: employeePushResponseSchema,
        retry: 'repeatable',
      }),
  };
}

/** Frees the connection of an answer we will not read. */
async function discardBody(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Nothing to free: the connection is already gone.
  }
}

/**
 * The provider's own explanation, as its problem+json or OAuth error body gives it (detail, then
 * title, error_description...), or its raw text: one line, bounded length.
 */
function providerMessage(body: string): string {
  let text = body;
  try {
    const json: unknown = JSON.parse(body);
    if (json !== null && typeof json === 'object') {
      const fields = json as Record<string, unknown>;
      const found = ['detail', 'error_description', 'title', 'message', 'error'].map((key) => fields[key]).find((v) => typeof v === 'string' && v.trim() !== '');
      if (typeof found === 'string') text = found;
    }
  } catch {
    // Not JSON: quote the text itself.
  }
  /* eslint-disable no-control-regex -- control characters are what this takes out of a provider's message */
  const line = text
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  /* eslint-enable no-control-regex */
  if (line === '') return 'no explanation given';
  return line.length > MAX_QUOTED_MESSAGE ? `${line.slice(0, MAX_QUOTED_MESSAGE)}...` : line;
}

/** A provider that echoes our credentials back must not make us show them to API clients. */
function redact(detail: string, secrets: readonly string[]): string {
  return secrets.reduce((text, secret) => (secret.length >= 4 ? text.replaceAll(secret, '[redacted]') : text), detail);
}

/**
 * Adapters for providers with an API (api_base_url set); null for the others. One adapter per
 * provider is kept, so its token cache outlives a single request, and rebuilt when the provider's
 * connection details change.
 */
export function httpAdapterFactory(options: HttpAdapterOptions = {}): AdapterFactory {
  const adapters = new Map<string, { fingerprint: string; adapter: PayrollProviderAdapter }>();
  return (provider) => {
    if (!provider.api_base_url) return null;
    const fingerprint = JSON.stringify([provider.api_base_url, provider.api_token_url, provider.api_client_id, provider.api_client_secret]);
    const known = adapters.get(provider.id);
    if (known?.fingerprint === fingerprint) return known.adapter;
    const adapter = createHttpAdapter({ ...provider }, options);
    adapters.set(provider.id, { fingerprint, adapter });
    return adapter;
  };
}
