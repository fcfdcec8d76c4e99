import { HttpProblem } from '../http/problem.ts';

/**
 * Why a call to a payroll provider failed. Callers branch on this (or on `providerStatus`), never
 * on the prose in `detail`.
 *
 * - unreachable: no HTTP answer at all (DNS, refused or reset connection), after any retries.
 * - timeout: the operation's time budget ran out.
 * - unavailable: the provider answered 5xx, 408 or 429, after any retries.
 * - bad-response: an answer that is not JSON, not the reference schema, or an unexpected redirect.
 * - rejected: the provider refused the request with a 4xx other than 401, 403 and 404.
 * - authentication-failed: the provider's token server refused our client credentials, or the
 *   provider refused a freshly issued token (401) or our client's rights (403).
 * - misconfigured: the provider row is incomplete (a token URL without client credentials).
 * - not-found: the provider answered 404 (unknown payroll, employee...).
 */
export type ProviderFailure =
  | 'unreachable'
  | 'timeout'
  | 'unavailable'
  | 'bad-response'
  | 'rejected'
  | 'authentication-failed'
  | 'misconfigured'
  | 'not-found';

const problemFor: Record<ProviderFailure, { status: number; slug: string }> = {
  unreachable: { status: 502, slug: 'provider-unavailable' },
  unavailable: { status: 502, slug: 'provider-unavailable' },
  timeout: { status: 504, slug: 'provider-timeout' },
  'bad-response': { status: 502, slug: 'provider-bad-response' },
  rejected: { status: 502, slug: 'provider-rejected' },
  'authentication-failed': { status: 502, slug: 'provider-authentication-failed' },
  misconfigured: { status: 502, slug: 'provider-misconfigured' },
  // The provider's 404 keeps its meaning: an unknown payroll at the provider is unknown to us too.
  'not-found': { status: 404, slug: 'not-found' },
};

export interface ProviderErrorInit {
  failure: ProviderFailure;
  providerId: string;
  /** The adapter operation, e.g. 'full availability'. */
  operation: string;
  /** Safe to show to API clients: never carries credentials or tokens. */
  detail: string;
  /** The provider's HTTP status when it answered at all. */
  providerStatus?: number;
  cause?: unknown;
}

/**
 * A failed call to a payroll provider. It is an HttpProblem, so when it escapes a route it leaves
 * as problem+json: 502 for an unusable provider, 504 for a timeout, 404 for the provider's 404.
 */
export class ProviderError extends HttpProblem {
  override readonly name: string = 'ProviderError';
  readonly failure: ProviderFailure;
  readonly providerId: string;
  readonly operation: string;
  readonly providerStatus: number | undefined;

  constructor(init: ProviderErrorInit) {
    const { status, slug } = problemFor[init.failure];
    super(status, slug, init.detail);
    this.failure = init.failure;
    this.providerId = init.providerId;
    this.operation = init.operation;
    this.providerStatus = init.providerStatus;
    if (init.cause !== undefined) this.cause = init.cause;
  }
}

/** The provider answered 404; `status` stays 404 so callers can map it to their own not-found. */
export class ProviderNotFoundError extends ProviderError {
  override readonly name: string = 'ProviderNotFoundError';

  constructor(init: Omit<ProviderErrorInit, 'failure'>) {
    super({ ...init, failure: 'not-found' });
  }
}
