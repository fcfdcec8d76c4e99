/**
 * The circuit breaker of a webhook endpoint: an endpoint whose attempts keep failing is left alone
 * for a while instead of being sent every delivery's retries.
 *
 * - closed: deliveries go out. Each failed attempt counts; a success resets the count.
 * - open: `failureThreshold` failed attempts in a row (across the endpoint's deliveries) open the
 *   circuit until `openUntil`. Deliveries due meanwhile wait in their biller's backlog (not in the
 *   queue: webhook-admission.ts), spending none of their attempts, and go out after it in their own
 *   retry schedule's order.
 * - half-open: once `openUntil` has passed, one delivery (the probe) is admitted, claims the circuit
 *   for as long as an attempt can take and is sent; the others wait for it. Its success closes the
 *   circuit (and the rest is admitted a share at a time); its failure opens it again, for twice as
 *   long as the last time (at most `openMaxMs`).
 *
 * An attempt that started while the circuit was closed and fails after another's failure opened it
 * changes nothing: it says no more than the failure that opened the circuit did.
 */
export interface CircuitSettings {
  /** Failed attempts in a row that open the circuit. */
  failureThreshold: number;
  /** How long the circuit stays open the first time. */
  openBaseMs: number;
  /** The longest it stays open, however many probes failed. */
  openMaxMs: number;
}

/** Five failures in a row: a receiver that is down, not one that hiccuped (a single delivery retries 9 times). */
export const CIRCUIT_FAILURE_THRESHOLD = 5;
/** The first opening; doubled by each failed probe. */
export const CIRCUIT_OPEN_BASE_MS = 60_000;
/** The longest opening: an endpoint that is back is found within the hour. */
export const CIRCUIT_OPEN_MAX_MS = 3_600_000;
/** The probe holds the circuit this much longer than an attempt may take, for its answer to be recorded. */
export const PROBE_MARGIN_MS = 5_000;

/** The breaker's timings, scaled like the retry schedule (1 in production; tests shrink both). */
export function circuitSettings(scale = 1): CircuitSettings {
  return { failureThreshold: CIRCUIT_FAILURE_THRESHOLD, openBaseMs: CIRCUIT_OPEN_BASE_MS * scale, openMaxMs: CIRCUIT_OPEN_MAX_MS * scale };
}

/** What the endpoint's row keeps of its circuit. */
export interface EndpointCircuit {
  /** Failed attempts since the last success. */
  consecutiveFailures: number;
  /** Set while open or probed: deliveries wait until then. */
  openUntil: Date | null;
  /** How long the last opening was; the next failed probe doubles it. */
  openMs: number | null;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

export const CLOSED_CIRCUIT: EndpointCircuit = { consecutiveFailures: 0, openUntil: null, openMs: null };

export function circuitState(circuit: Pick<EndpointCircuit, 'openUntil'>, now: Date): CircuitState {
  if (circuit.openUntil === null) return 'closed';
  return circuit.openUntil.getTime() > now.getTime() ? 'open' : 'half_open';
}

/** Until when a probe holds a half-open circuit: the other deliveries wait that long, or for its success. */
export function probeLeaseUntil(now: Date, attemptTimeoutMs: number): Date {
  return new Date(now.getTime() + attemptTimeoutMs + PROBE_MARGIN_MS);
}

/**
 * The circuit after a failed attempt. `probe`: the attempt was the half-open circuit's probe.
 * `circuit` is the endpoint's circuit as it stands when the failure is recorded.
 */
export function circuitAfterFailure(circuit: EndpointCircuit, failure: { at: Date; probe: boolean }, settings: CircuitSettings): EndpointCircuit {
  const consecutiveFailures = circuit.consecutiveFailures + 1;
  const openFor = (ms: number): EndpointCircuit => ({ consecutiveFailures, openUntil: new Date(failure.at.getTime() + ms), openMs: ms });
  const state = circuitState(circuit, failure.at);
  // A failed probe, or a failure while the circuit waited for one: the endpoint is still down.
  if (failure.probe || state === 'half_open') {
    return openFor(Math.min(settings.openMaxMs, Math.max(settings.openBaseMs, 2 * (circuit.openMs ?? 0))));
  }
  // Already open: a straggler that set out before the circuit opened.
  if (state === 'open') return { ...circuit, consecutiveFailures };
  if (consecutiveFailures >= settings.failureThreshold) return openFor(Math.min(settings.openMaxMs, settings.openBaseMs));
  return { consecutiveFailures, openUntil: null, openMs: null };
}
