import type { ProblemCode } from './problem-codes.ts';

/** The services the process depends on, as health reports and outage errors name them. */
export type Dependency = 'postgres' | 'redis';

/**
 * What the service refuses, or cannot do, in its own terms: a kind, a stable code and a sentence,
 * never a status code or a header. How a caller hears about it is its edge's business: the HTTP
 * error plugin (plugins/errors.ts) answers problem+json, the CLI (failures.ts) one line and an exit
 * code.
 */

/** Where in the input a refusal points (an RFC 6901 JSON pointer) and what is wrong there. */
export interface FieldError {
  pointer: string;
  detail: string;
}

/**
 * What kind of failure it is, which is all an edge needs to know to answer it:
 *
 * - malformed: the request cannot be understood as sent (a cursor this API did not issue).
 * - forbidden: the caller is known and may not do this.
 * - not-found: there is no such thing, or none this caller may see.
 * - conflict: the thing is in a state that does not allow this, now or any more.
 * - invalid: understood, and refused by a rule; field errors say where.
 * - rate-limited: too many attempts; retryAfterSeconds says when to try again.
 * - upstream-failed: a payroll provider failed, or could not be used.
 * - upstream-timed-out: a payroll provider did not answer in time.
 */
export type DomainErrorKind = 'malformed' | 'forbidden' | 'not-found' | 'conflict' | 'invalid' | 'rate-limited' | 'upstream-failed' | 'upstream-timed-out';

/** The refusal's title is its code's, from the catalogue (problem-codes.ts): the same wherever it is raised. */
export interface DomainErrorOptions {
  errors?: FieldError[];
  /**
   * Facts a client can act on without parsing `detail`. A resource's status goes in a member
   * named for it (payment_status), never in one an edge defines for itself (status, type...).
   */
  members?: Record<string, unknown>;
  /** When trying again may succeed. */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly kind: DomainErrorKind;
  /** A stable slug callers branch on (e.g. payment-not-cancellable), never the prose of `detail`; one of the catalogue's. */
  readonly code: ProblemCode;
  /** Safe to show to the caller: names what was refused and why. */
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly members: Record<string, unknown>;
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: DomainErrorKind, code: ProblemCode, detail: string, options: DomainErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.code = code;
    this.detail = detail;
    this.errors = options.errors;
    this.members = options.members ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export class MalformedRequestError extends DomainError {
  constructor(code: ProblemCode, detail: string, options?: DomainErrorOptions) {
    super('malformed', code, detail, options);
  }
}

export class ForbiddenError extends DomainError {
  constructor(code: ProblemCode, detail: string, options?: DomainErrorOptions) {
    super('forbidden', code, detail, options);
  }
}

/** `what` names the thing asked for, e.g. `Payment ${id}`. */
export class NotFoundError extends DomainError {
  constructor(what: string) {
    super('not-found', 'not-found', `${what} was not found`);
  }
}

export class ConflictError extends DomainError {
  constructor(code: ProblemCode, detail: string, options?: DomainErrorOptions) {
    super('conflict', code, detail, options);
  }
}

export class InvalidError extends DomainError {
  constructor(code: ProblemCode, detail: string, options?: DomainErrorOptions) {
    super('invalid', code, detail, options);
  }
}

export class RateLimitedError extends DomainError {
  constructor(code: ProblemCode, detail: string, retryAfterSeconds: number, options?: Omit<DomainErrorOptions, 'retryAfterSeconds'>) {
    super('rate-limited', code, detail, { ...options, retryAfterSeconds });
  }
}

/** A payroll provider failed us in a way its own ProviderError does not already say. */
export class UpstreamError extends DomainError {
  constructor(code: ProblemCode, detail: string, options?: DomainErrorOptions) {
    super('upstream-failed', code, detail, options);
  }
}

/**
 * Thrown where work needs PostgreSQL or Redis and cannot have it. Not a DomainError on purpose:
 * it refuses nothing, and code that tells refusals apart from failures (a provider's answer, the
 * CLI) must see an outage as a failure, with its cause, to name the unreachable address.
 */
export class DependencyUnavailable extends Error {
  constructor(
    readonly dependency: Dependency,
    options: { cause: unknown },
  ) {
    super(`${dependency} is unavailable`, options);
  }
}
