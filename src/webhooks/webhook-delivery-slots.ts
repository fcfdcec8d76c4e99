/**
 * How a worker process shares its delivery slots (the delivery queue's concurrency, 16) between
 * billers, so that one biller's slow receivers never hold up another biller's deliveries.
 *
 * - A biller runs at most `perBiller` deliveries at once (WEBHOOK_DELIVERIES_PER_BILLER, 4).
 * - Its first delivery always starts when a slot is free; each further one only while at least
 *   `min(perBiller, total - perBiller)` slots stay free for others (4 of 16). So a handful of
 *   billers with slow receivers hold at most 12 slots between them, and a biller with nothing
 *   running finds a slot free until 13 billers are all sending at once.
 * - A delivery that may not start now holds no slot: its job goes back to the queue as delayed,
 *   keeping its attempts, and is woken (moved to the back of the waiting line) when one of its
 *   biller's deliveries ends, or when its delay runs out, whichever comes first. The delay is a
 *   safety net (a wake lost with a restarted process) and grows with the biller's backlog, so a
 *   backlog of thousands does not churn through the queue every few seconds.
 *
 * Each worker process counts its own slots: with several processes a biller runs at most
 * `perBiller` deliveries in each.
 */
export interface SlotRules {
  /** Deliveries the process runs at once: the delivery queue's concurrency. */
  total: number;
  /** Deliveries of one biller the process runs at once. */
  perBiller: number;
}

/** Whether a biller may start one more delivery, with `biller` of its own and `all` in all running. */
export function mayStartDelivery(running: { biller: number; all: number }, rules: SlotRules): boolean {
  if (running.all >= rules.total || running.biller >= rules.perBiller) return false;
  if (running.biller === 0) return true;
  const keepFree = Math.max(0, Math.min(rules.perBiller, rules.total - rules.perBiller));
  return rules.total - running.all - 1 >= keepFree;
}

/** The safety-net delay of a delivery waiting for its biller's slots. */
export const WAIT_BASE_MS = 30_000;
export const WAIT_MAX_MS = 300_000;

/**
 * How long a waiting delivery stays delayed unless woken first: `WAIT_BASE_MS` for the first
 * `perBiller` in line (a slot of theirs frees within one delivery's time), then one more for every
 * `perBiller` ahead of it, up to `WAIT_MAX_MS`.
 */
export function waitDelayMs(placeInLine: number, perBiller: number): number {
  return Math.min(WAIT_MAX_MS, WAIT_BASE_MS * (1 + Math.floor(placeInLine / Math.max(1, perBiller))));
}

/** A delivery job waiting for a slot or an endpoint, and how to wake it (move it back to the waiting line). */
export interface DeliveryWaiter {
  /** One per job: a job that waits again keeps its place. */
  key: string;
  wake: () => void;
}

export type SlotGrant = { granted: true; release: () => void } | { granted: false; placeInLine: number };

/** The delivery slots of one worker process (one per worker host). */
export class DeliverySlots {
  readonly rules: SlotRules;
  private running = 0;
  private readonly runningByBiller = new Map<string, number>();
  private readonly waitingForBiller = new Map<string, Map<string, () => void>>();
  private readonly waitingForEndpoint = new Map<string, Map<string, () => void>>();

  constructor(rules: SlotRules) {
    this.rules = rules;
  }

  /** Deliveries running now, of one biller or in all. */
  runningCount(billerId?: string): number {
    return billerId === undefined ? this.running : (this.runningByBiller.get(billerId) ?? 0);
  }

  /**
   * A slot for one delivery of the biller, given back with `release` (once; later calls do
   * nothing). When the biller may not start another now, the waiter joins its line (or keeps its
   * place in it) and is woken once one of the biller's deliveries ends.
   */
  take(billerId: string, waiter?: DeliveryWaiter): SlotGrant {
    const line = this.waitingForBiller.get(billerId);
    if (!mayStartDelivery({ biller: this.runningCount(billerId), all: this.running }, this.rules)) {
      if (!waiter) return { granted: false, placeInLine: line?.size ?? 0 };
      const waiting = line ?? new Map<string, () => void>();
      this.waitingForBiller.set(billerId, waiting);
      const place = waiting.has(waiter.key) ? [...waiting.keys()].indexOf(waiter.key) : waiting.size;
      waiting.set(waiter.key, waiter.wake);
      return { granted: false, placeInLine: place };
    }
    if (waiter) this.leaveLine(this.waitingForBiller, billerId, waiter.key);
    this.running += 1;
    this.runningByBiller.set(billerId, this.runningCount(billerId) + 1);
    let released = false;
    return {
      granted: true,
      release: () => {
        if (released) return;
        released = true;
        this.running -= 1;
        const left = this.runningCount(billerId) - 1;
        if (left > 0) this.runningByBiller.set(billerId, left);
        else this.runningByBiller.delete(billerId);
        this.wakeFirst(billerId);
      },
    };
  }

  /** The waiter is woken when this process hears from the endpoint: a success (its circuit closed) or a probe's answer. */
  waitForEndpoint(endpointId: string, waiter: DeliveryWaiter): void {
    const waiting = this.waitingForEndpoint.get(endpointId) ?? new Map<string, () => void>();
    this.waitingForEndpoint.set(endpointId, waiting);
    waiting.set(waiter.key, waiter.wake);
  }

  /** The delivery no longer waits for the biller's slots, or the endpoint (it went past that, or has nothing left to send). */
  forget(key: string, lines: { billerId?: string; endpointId?: string }): void {
    if (lines.billerId !== undefined) this.leaveLine(this.waitingForBiller, lines.billerId, key);
    if (lines.endpointId !== undefined) this.leaveLine(this.waitingForEndpoint, lines.endpointId, key);
  }

  /**
   * The endpoint answered a probe, or a delivery: every delivery waiting for it goes back to the line,
   * to go out if its circuit closed, or to wait again for as long as it opened.
   */
  wakeEndpointWaiters(endpointId: string): void {
    const waiting = this.waitingForEndpoint.get(endpointId);
    if (!waiting) return;
    this.waitingForEndpoint.delete(endpointId);
    for (const wake of waiting.values()) wake();
  }

  private wakeFirst(billerId: string): void {
    const waiting = this.waitingForBiller.get(billerId);
    const first = waiting?.entries().next().value;
    if (!waiting || !first) return;
    waiting.delete(first[0]);
    if (waiting.size === 0) this.waitingForBiller.delete(billerId);
    first[1]();
  }

  private leaveLine(lines: Map<string, Map<string, () => void>>, id: string, key: string): void {
    const waiting = lines.get(id);
    if (!waiting?.delete(key)) return;
    if (waiting.size === 0) lines.delete(id);
  }
}
