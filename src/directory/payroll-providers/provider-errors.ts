import { DomainError, type DomainErrorKind } from '../../platform/shared/domain-errors.ts';
import type { ProblemCode } from '../../platform/shared/problem-codes.ts';

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
 * - misconfigured: the provider row is incomplete (a token URL without client credentials), or
 *   names a URL the URL policy refuses (http, or a non-public address: provider-url-guard.ts).
 * - not-found: the provider answered 404 (unknown payroll, employee...).
 */
export type ProviderFailure = 'unreachable' | 'timeout' | 'unavailable' | 'bad-response' | 'rejected' | 'authentication-failed' | 'misconfigured' | 'not-found';

const domainErrorOf: Record<ProviderFailure, { kind: DomainErrorKind; code: ProblemCode }> = {
  unreachable: { kind: 'upstream-failed', code: 'provider-unavailable' },
  unavailable: { kind: 'upstream-failed', code: 'provider-unavailable' },
  timeout: { kind: 'upstream-timed-out', code: 'provider-timeout' },
  'bad-response': { kind: 'upstream-failed', code: 'provider-bad-response' },
  rejected: { kind: 'upstream-failed', code: 'provider-rejected' },
  'authentication-failed': { kind: 'upstream-failed', code: 'provider-authentication-failed' },
  misconfigured: { kind: 'upstream-failed', code: 'provider-misconfigured' },
  // The provider's 404 keeps its meaning: an unknown payroll at the provider is unknown to us too.
  'not-found': { kind: 'not-found', code: 'not-found' },
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
 * A failed call to a payroll provider. It is a DomainError, so when it escapes a route it leaves
 * as any other: an upstream failure for an unusable provider, an upstream timeout for a timeout,
 * not-found for the provider's 404.
 */
export class ProviderError extends DomainError {
  override readonly name: string = 'ProviderError';
  readonly failure: ProviderFailure;
  readonly providerId: string;
  readonly operation: string;
  readonly providerStatus: number | undefined;

  constructor(init: ProviderErrorInit) {
    const { kind, code } = domainErrorOf[init.failure];
    super(kind, code, init.detail, init.cause === undefined ? {} : { cause: init.cause });
    this.failure = init.failure;
    this.providerId = init.providerId;
    this.operation = init.operation;
    this.providerStatus = init.providerStatus;
  }
}

/** The provider answered 404; its kind stays not-found so callers can map it to their own not-found. */
export class ProviderNotFoundError extends ProviderError {
  override readonly name: string = 'ProviderNotFoundError';

  constructor(init: Omit<ProviderErrorInit, 'failure'>) {
    super({ ...init, failure: 'not-found' });
  }
}
