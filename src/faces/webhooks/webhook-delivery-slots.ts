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
 *   keeping its attempts and its delivery, and is woken (moved to the back of the waiting line) when
 *   one of its biller's deliveries ends, or when its delay runs out, whichever comes first. The delay
 *   is a safety net (a wake lost with a restarted process) and grows with the biller's line.
 *
 * The slots share what is running; what is queued is shared by admission (webhook-admission.ts): a
 * biller has at most WEBHOOK_QUEUED_PER_BILLER deliveries in the queue, so its line here is never
 * longer than that, and its backlog never sits in the queue at all.
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

/** A delivery job waiting for a slot, and how to wake it (move it back to the waiting line). */
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
    if (waiter) this.forget(waiter.key, billerId);
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

  /** The delivery no longer waits for the biller's slots (it went ahead some other way, or has nothing left to send). */
  forget(key: string, billerId: string): void {
    const waiting = this.waitingForBiller.get(billerId);
    if (!waiting?.delete(key)) return;
    if (waiting.size === 0) this.waitingForBiller.delete(billerId);
  }

  private wakeFirst(billerId: string): void {
    const waiting = this.waitingForBiller.get(billerId);
    const first = waiting?.entries().next().value;
    if (!waiting || !first) return;
    waiting.delete(first[0]);
    if (waiting.size === 0) this.waitingForBiller.delete(billerId);
    first[1]();
  }
}
