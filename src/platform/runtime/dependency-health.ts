import type { Logger } from 'pino';

import type { Dependency } from '../shared/domain-errors.ts';

export type { Dependency };
export const dependencies: readonly Dependency[] = ['postgres', 'redis'];

/** `unknown` until the first probe has answered. */
export type DependencyStatus = 'up' | 'down' | 'unknown';

export interface DependencyReport {
  status: DependencyStatus;
  /** When the dependency entered this status (ISO 8601). */
  since: string;
  /** Why it is down: the last connection error's message. */
  error?: string;
}

/**
 * What the rest of a process needs to know about PostgreSQL and Redis, without doing I/O itself:
 * readiness probes read `report()`, job failure handlers pass connection errors to `noteFailure()`,
 * the API's 503 path passes every refused request to `noteRefusal()`, and the worker host pauses its
 * workers while the database is down.
 */
export interface DependencyHealth {
  status(dependency: Dependency): DependencyStatus;
  isUp(dependency: Dependency): boolean;
  report(): Record<Dependency, DependencyReport>;
  /** An error met while using a dependency. A connection error leads to a probe; the probe decides. */
  noteFailure(dependency: Dependency, error: unknown): void;
  /**
   * A request was answered 503 because the dependency could not be reached. Counted (the line that
   * says it is back tells how many were refused), and unless the dependency is already known to be
   * down it is probed at once, so that the line saying it went comes with the first refusals rather
   * than at the next periodic look. The requests themselves need log nothing more.
   */
  noteRefusal(dependency: Dependency, error: unknown): void;
  /** A connection became ready again: probe now rather than at the next backoff step. */
  noteSignOfLife(dependency: Dependency): void;
  onChange(listener: (dependency: Dependency, status: 'up' | 'down') => void): () => void;
  /** Resolves once the dependency has answered a probe (at once if it is up). */
  whenUp(dependency: Dependency): Promise<void>;
  close(): void;
}

export interface DependencyProbes {
  /** Resolves when the dependency answers (`select 1`, `PING`); rejects otherwise. */
  postgres: () => Promise<unknown>;
  redis: () => Promise<unknown>;
}

export interface DependencyHealthSettings {
  /** Probe period while a dependency is up: catches an outage nothing else has noticed. */
  upIntervalMs: number;
  /**
   * Probe backoff while it is down: from the first value, doubling, up to the second. Short: one
   * connection attempt a second costs nothing, and the line that says it is back (and workers
   * resuming) waits for the next probe.
   */
  downIntervalMs: readonly [number, number];
  /** A probe that has not answered by then counts as failed (a black-holed host never refuses). */
  probeTimeoutMs: number;
  /**
   * While a dependency answers its probes, refused requests start at most one probe per this long:
   * a pool that cannot hand out connections fails requests faster than probes should run.
   */
  refusalProbeGapMs: number;
  /** Refusals the probes do not explain (the dependency answers them) are counted in one line at most this often. */
  refusalReportIntervalMs: number;
}

const defaultSettings: DependencyHealthSettings = {
  upIntervalMs: 15_000,
  downIntervalMs: [250, 1_000],
  probeTimeoutMs: 3_000,
  refusalProbeGapMs: 1_000,
  refusalReportIntervalMs: 10_000,
};

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  // PostgreSQL: admin/crash shutdown, cannot connect now, and the connection_exception class.
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

const CONNECTION_ERROR_MESSAGES =
  /connection is closed|connection terminated|stream isn't writeable|enableOfflineQueue|client has encountered a connection error|timeout exceeded when trying to connect|reached the max retries per request|connect ECONNREFUSED|getaddrinfo|socket hang up/i;

/**
 * Whether an error means "could not talk to the dependency" (as opposed to "it answered no"): the
 * errors worth a retry once the dependency is back, and that a 503 rather than a 500 describes.
 */
export function isConnectionError(error: unknown): boolean {
  if (typeof error === 'string') return CONNECTION_ERROR_MESSAGES.test(error);
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  if (error.name === 'MaxRetriesPerRequestError') return true;
  // Node reports a refused connection to every address of a name as one AggregateError.
  if (error instanceof AggregateError && error.errors.some((inner) => isConnectionError(inner))) return true;
  if (error.cause !== undefined && error.cause !== error && isConnectionError(error.cause)) return true;
  return CONNECTION_ERROR_MESSAGES.test(error.message);
}

function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describe(error.errors[0]);
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface State {
  status: DependencyStatus;
  since: Date;
  error: string | undefined;
  probing: Promise<void> | null;
  timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms), so a refusal can bring it forward. */
  timerDueAt: number;
  backoffMs: number;
  lastProbeAt: number;
  /** Requests refused (noteRefusal) since the last line that counted them, the first of them when. */
  refusals: number;
  firstRefusalAt: number;
  /** When refusals the probes did not confirm were last reported. */
  refusalsReportedAt: number;
}

/**
 * Probes each dependency now, then periodically (often while it is down), and logs one line when
 * a dependency goes and one when it comes back: however many connections fail and retry in
 * between, and however many requests are refused meanwhile, the transition is what is logged,
 * never the retries or the requests (the line that says it is back counts them).
 */
export function monitorDependencies(logger: Logger, probes: DependencyProbes, overrides: Partial<DependencyHealthSettings> = {}): DependencyHealth {
  const settings = { ...defaultSettings, ...overrides };
  const listeners = new Set<(dependency: Dependency, status: 'up' | 'down') => void>();
  const waiters = new Map<Dependency, Array<() => void>>();
  const states = new Map<Dependency, State>(
    dependencies.map((dependency) => [
      dependency,
      {
        status: 'unknown',
        since: new Date(),
        error: undefined,
        probing: null,
        timer: undefined,
        timerDueAt: Number.POSITIVE_INFINITY,
        backoffMs: settings.downIntervalMs[0],
        lastProbeAt: Number.NEGATIVE_INFINITY,
        refusals: 0,
        firstRefusalAt: Number.POSITIVE_INFINITY,
        refusalsReportedAt: Number.NEGATIVE_INFINITY,
      } satisfies State,
    ]),
  );
  let closed = false;

  const stateOf = (dependency: Dependency) => states.get(dependency)!;

  function emit(dependency: Dependency, status: 'up' | 'down') {
    for (const listener of listeners) {
      try {
        listener(dependency, status);
      } catch (error) {
        logger.error({ dependency, err: error }, 'dependency listener failed');
      }
    }
  }

  function markUp(dependency: Dependency) {
    const state = stateOf(dependency);
    state.backoffMs = settings.downIntervalMs[0];
    if (state.status === 'up') {
      reportUnexplainedRefusals(dependency);
      return;
    }
    const previous = state.status;
    const downForMs = Date.now() - state.since.getTime();
    state.status = 'up';
    state.since = new Date();
    state.error = undefined;
    if (previous === 'down') {
      logger.info({ dependency, event: 'dependency_up', downForMs, refusedRequests: state.refusals }, `${dependency} available again`);
      state.refusals = 0;
      state.firstRefusalAt = Number.POSITIVE_INFINITY;
    }
    for (const resolve of waiters.get(dependency) ?? []) resolve();
    waiters.delete(dependency);
    emit(dependency, 'up');
  }

  function markDown(dependency: Dependency, error: unknown) {
    const state = stateOf(dependency);
    state.error = describe(error);
    if (state.status === 'down') return;
    state.status = 'down';
    state.since = new Date();
    logger.warn({ dependency, event: 'dependency_down', error: state.error }, `${dependency} unavailable; waiting for it (retrying with backoff, next line when it is back)`);
    emit(dependency, 'down');
  }

  /**
   * Requests were refused for a dependency that answers its probes (a connection lost and replaced,
   * a pool out of connections): no outage to report, but not nothing either. One line, at most every
   * refusalReportIntervalMs, counting them.
   */
  function reportUnexplainedRefusals(dependency: Dependency) {
    const state = stateOf(dependency);
    const now = Date.now();
    // A probe that started before the refusals says nothing about them: the next one will.
    if (state.refusals === 0 || state.lastProbeAt < state.firstRefusalAt) return;
    if (now - state.refusalsReportedAt < settings.refusalReportIntervalMs) return;
    logger.warn(
      { dependency, event: 'dependency_refusals', refusedRequests: state.refusals },
      `${state.refusals} request(s) answered 503 because ${dependency} could not be reached, though it answers probes`,
    );
    state.refusals = 0;
    state.firstRefusalAt = Number.POSITIVE_INFINITY;
    state.refusalsReportedAt = now;
  }

  function schedule(dependency: Dependency) {
    const state = stateOf(dependency);
    clearTimeout(state.timer);
    if (closed) return;
    let delay = settings.upIntervalMs;
    if (state.status !== 'up') {
      delay = state.backoffMs;
      state.backoffMs = Math.min(state.backoffMs * 2, settings.downIntervalMs[1]);
    }
    probeIn(dependency, delay);
  }

  function probeIn(dependency: Dependency, delayMs: number) {
    const state = stateOf(dependency);
    clearTimeout(state.timer);
    state.timerDueAt = Date.now() + delayMs;
    state.timer = setTimeout(() => void probe(dependency), delayMs);
    state.timer.unref();
  }

  function probe(dependency: Dependency): Promise<void> {
    const state = stateOf(dependency);
    if (state.probing) return state.probing;
    state.lastProbeAt = Date.now();
    state.probing = withTimeout(probes[dependency](), settings.probeTimeoutMs)
      .then(
        () => markUp(dependency),
        (error: unknown) => markDown(dependency, error),
      )
      .finally(() => {
        state.probing = null;
        schedule(dependency);
      });
    return state.probing;
  }

  for (const dependency of dependencies) void probe(dependency);

  return {
    status: (dependency) => stateOf(dependency).status,
    isUp: (dependency) => stateOf(dependency).status === 'up',
    report() {
      const entries = dependencies.map((dependency) => {
        const state = stateOf(dependency);
        const report: DependencyReport = { status: state.status, since: state.since.toISOString() };
        if (state.status === 'down' && state.error) report.error = state.error;
        return [dependency, report] as const;
      });
      return Object.fromEntries(entries) as Record<Dependency, DependencyReport>;
    },
    noteFailure(dependency, error) {
      if (closed || !isConnectionError(error) || stateOf(dependency).status === 'down') return;
      void probe(dependency);
    },
    noteRefusal(dependency) {
      if (closed) return;
      const state = stateOf(dependency);
      if (state.refusals === 0) state.firstRefusalAt = Date.now();
      state.refusals += 1;
      // Known to be down: the down line is out, and the backoff probes are running.
      if (state.status === 'down' || state.probing) return;
      const due = state.lastProbeAt + settings.refusalProbeGapMs;
      const now = Date.now();
      if (due <= now) void probe(dependency);
      else if (state.timerDueAt > due) probeIn(dependency, due - now);
    },
    noteSignOfLife(dependency) {
      if (closed || stateOf(dependency).status === 'up') return;
      void probe(dependency);
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    whenUp(dependency) {
      if (stateOf(dependency).status === 'up') return Promise.resolve();
      return new Promise((resolve) => waiters.set(dependency, [...(waiters.get(dependency) ?? []), resolve]));
    },
    close() {
      closed = true;
      for (const state of states.values()) clearTimeout(state.timer);
      listeners.clear();
    },
  };
}
