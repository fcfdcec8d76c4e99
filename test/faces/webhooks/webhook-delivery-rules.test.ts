import { describe, expect, it } from 'vitest';
import {
  CIRCUIT_FAILURE_THRESHOLD,
  CLOSED_CIRCUIT,
  circuitAfterFailure,
  circuitSettings,
  circuitState,
  PROBE_MARGIN_MS,
  probeLeaseUntil,
  type EndpointCircuit,
} from '../../../src/faces/webhooks/webhook-circuit-breaker.ts';
import { takingTurns } from '../../../src/faces/webhooks/webhook-admission.ts';
import { DeliverySlots, mayStartDelivery, WAIT_BASE_MS, WAIT_MAX_MS, waitDelayMs } from '../../../src/faces/webhooks/webhook-delivery-slots.ts';

const at = new Date('2026-12-11T10:00:00.000Z');
const later = (ms: number) => new Date(at.getTime() + ms);
const settings = { failureThreshold: 3, openBaseMs: 1_000, openMaxMs: 8_000 };

describe('circuitState', () => {
  it('is closed without an opening, open before it ends, half-open from the instant it ends', () => {
    expect(circuitState({ openUntil: null }, at)).toBe('closed');
    expect(circuitState({ openUntil: later(1) }, at)).toBe('open');
    expect(circuitState({ openUntil: at }, at)).toBe('half_open');
    expect(circuitState({ openUntil: later(-1) }, at)).toBe('half_open');
  });
});

describe('circuitAfterFailure', () => {
  const fail = (circuit: EndpointCircuit, probe = false) => circuitAfterFailure(circuit, { at, probe }, settings);

  it('counts failures below the threshold and stays closed', () => {
    expect(fail(CLOSED_CIRCUIT)).toEqual({ consecutiveFailures: 1, openUntil: null, openMs: null });
    expect(fail({ consecutiveFailures: 1, openUntil: null, openMs: null })).toEqual({ consecutiveFailures: 2, openUntil: null, openMs: null });
  });

  it('opens for the base time at the threshold, and at every closed failure past it', () => {
    expect(fail({ consecutiveFailures: 2, openUntil: null, openMs: null })).toEqual({ consecutiveFailures: 3, openUntil: later(1_000), openMs: 1_000 });
    expect(fail({ consecutiveFailures: 7, openUntil: null, openMs: null })).toEqual({ consecutiveFailures: 8, openUntil: later(1_000), openMs: 1_000 });
  });

  it('leaves an open circuit as it is for a straggler (an attempt that set out before it opened), counting the failure', () => {
    expect(fail({ consecutiveFailures: 3, openUntil: later(500), openMs: 1_000 })).toEqual({ consecutiveFailures: 4, openUntil: later(500), openMs: 1_000 });
  });

  it('doubles the opening after a failed probe, up to the longest', () => {
    expect(fail({ consecutiveFailures: 3, openUntil: later(20_000), openMs: 1_000 }, true)).toEqual({ consecutiveFailures: 4, openUntil: later(2_000), openMs: 2_000 });
    expect(fail({ consecutiveFailures: 4, openUntil: later(20_000), openMs: 2_000 }, true)).toMatchObject({ openUntil: later(4_000), openMs: 4_000 });
    expect(fail({ consecutiveFailures: 5, openUntil: later(20_000), openMs: 4_000 }, true)).toMatchObject({ openUntil: later(8_000), openMs: 8_000 });
    expect(fail({ consecutiveFailures: 6, openUntil: later(20_000), openMs: 8_000 }, true)).toMatchObject({ openUntil: later(8_000), openMs: 8_000 });
  });

  it('takes a failure on a half-open circuit nobody probed yet as a failed probe', () => {
    expect(fail({ consecutiveFailures: 3, openUntil: later(-10), openMs: 1_000 })).toEqual({ consecutiveFailures: 4, openUntil: later(2_000), openMs: 2_000 });
  });

  it('opens for the base time when a probe fails with no opening recorded (never below the base, never above the longest)', () => {
    expect(fail({ consecutiveFailures: 0, openUntil: null, openMs: null }, true)).toMatchObject({ openUntil: later(1_000), openMs: 1_000 });
    expect(circuitAfterFailure(CLOSED_CIRCUIT, { at, probe: true }, { failureThreshold: 1, openBaseMs: 9_000, openMaxMs: 5_000 })).toMatchObject({ openMs: 5_000 });
  });

  it('walks a dead endpoint from closed to the longest opening, one failed probe at a time', () => {
    let circuit = CLOSED_CIRCUIT;
    const openings: Array<number | null> = [];
    for (let attempt = 0; attempt < 8; attempt += 1) {
      const state = circuitState(circuit, at);
      circuit = circuitAfterFailure(circuit, { at, probe: state !== 'closed' }, settings);
      openings.push(circuit.openMs);
      // Time passes to the end of the opening, where the next delivery probes.
      if (circuit.openUntil) circuit = { ...circuit, openUntil: at };
    }
    expect(openings).toEqual([null, null, 1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });
});

describe('circuit settings', () => {
  it('opens after 5 failures for 1 minute, at most 1 hour, scaled with the retry schedule', () => {
    expect(circuitSettings()).toEqual({ failureThreshold: CIRCUIT_FAILURE_THRESHOLD, openBaseMs: 60_000, openMaxMs: 3_600_000 });
    expect(CIRCUIT_FAILURE_THRESHOLD).toBe(5);
    expect(circuitSettings(0.001)).toEqual({ failureThreshold: 5, openBaseMs: 60, openMaxMs: 3_600 });
  });

  it('holds a probed circuit for the attempt timeout and a margin', () => {
    expect(probeLeaseUntil(at, 15_000)).toEqual(later(15_000 + PROBE_MARGIN_MS));
  });
});

describe('mayStartDelivery', () => {
  const rules = { total: 16, perBiller: 4 };

  it('gives a biller with nothing running a slot whenever one is free', () => {
    for (let all = 0; all < 16; all += 1) expect(mayStartDelivery({ biller: 0, all }, rules), `all=${all}`).toBe(true);
    expect(mayStartDelivery({ biller: 0, all: 16 }, rules)).toBe(false);
  });

  it('never gives a biller more than perBiller', () => {
    for (let all = 4; all < 16; all += 1) expect(mayStartDelivery({ biller: 4, all }, rules)).toBe(false);
  });

  it("gives a biller's second to fourth only while 4 slots stay free for others", () => {
    const table: Array<[number, number, boolean]> = [];
    for (let biller = 1; biller < 4; biller += 1) {
      for (let all = biller; all < 16; all += 1) table.push([biller, all, mayStartDelivery({ biller, all }, rules)]);
    }
    expect(table.filter(([, , may]) => may).every(([, all]) => 16 - all - 1 >= 4)).toBe(true);
    expect(table.filter(([, , may]) => !may).every(([, all]) => 16 - all - 1 < 4)).toBe(true);
  });

  it('keeps min(perBiller, total - perBiller) free: none when one biller may use every slot', () => {
    expect(mayStartDelivery({ biller: 14, all: 14 }, { total: 16, perBiller: 16 })).toBe(true);
    expect(mayStartDelivery({ biller: 11, all: 11 }, { total: 16, perBiller: 12 })).toBe(true);
    expect(mayStartDelivery({ biller: 11, all: 12 }, { total: 16, perBiller: 12 })).toBe(false);
    expect(mayStartDelivery({ biller: 0, all: 0 }, { total: 1, perBiller: 1 })).toBe(true);
    expect(mayStartDelivery({ biller: 1, all: 1 }, { total: 1, perBiller: 1 })).toBe(false);
  });

  it('holds for every pool size and share: a biller never passes its share, and a biller with nothing running is refused only when no slot is free', () => {
    for (let total = 1; total <= 32; total += 1) {
      for (let perBiller = 1; perBiller <= total; perBiller += 1) {
        for (let all = 0; all <= total; all += 1) {
          for (let biller = 0; biller <= Math.min(all, total); biller += 1) {
            const may = mayStartDelivery({ biller, all }, { total, perBiller });
            if (biller >= perBiller || all >= total) expect(may).toBe(false);
            if (biller === 0 && all < total) expect(may).toBe(true);
          }
        }
      }
    }
  });
});

describe('waitDelayMs', () => {
  it('waits the base for the first perBiller in line, one more base per perBiller ahead, at most the maximum', () => {
    expect([0, 3, 4, 7, 8, 100, 10_000].map((place) => waitDelayMs(place, 4))).toEqual([
      WAIT_BASE_MS,
      WAIT_BASE_MS,
      2 * WAIT_BASE_MS,
      2 * WAIT_BASE_MS,
      3 * WAIT_BASE_MS,
      WAIT_MAX_MS,
      WAIT_MAX_MS,
    ]);
  });
});

describe('DeliverySlots', () => {
  function waiterLog() {
    const woken: string[] = [];
    return { woken, waiter: (key: string) => ({ key, wake: () => woken.push(key) }) };
  }

  it("lets a biller run 4 of 16 at once; the others wait in line and are woken one per delivery of the biller's that ends", () => {
    const slots = new DeliverySlots({ total: 16, perBiller: 4 });
    const { woken, waiter } = waiterLog();
    const grants = [1, 2, 3, 4].map((n) => slots.take('b', waiter(`b${n}`)));
    expect(grants.every((grant) => grant.granted)).toBe(true);
    expect(slots.take('b', waiter('b5'))).toEqual({ granted: false, placeInLine: 0 });
    expect(slots.take('b', waiter('b6'))).toEqual({ granted: false, placeInLine: 1 });
    // Asking again keeps a waiter's place.
    expect(slots.take('b', waiter('b5'))).toEqual({ granted: false, placeInLine: 0 });
    // Another biller is not held up.
    const a = slots.take('a', waiter('a1'));
    expect(a.granted).toBe(true);
    expect(slots.runningCount()).toBe(5);
    expect(slots.runningCount('b')).toBe(4);

    if (a.granted) a.release();
    expect(woken).toEqual([]);
    const first = grants[0]!;
    if (first.granted) {
      first.release();
      first.release();
    }
    expect(woken).toEqual(['b5']);
    expect(slots.runningCount('b')).toBe(3);
    // b5 comes back and gets the slot; b6 still waits.
    expect(slots.take('b', waiter('b5')).granted).toBe(true);
    expect(slots.take('b', waiter('b7'))).toEqual({ granted: false, placeInLine: 1 });
  });

  it('never wakes a delivery that left the line (it went ahead some other way)', () => {
    const slots = new DeliverySlots({ total: 2, perBiller: 1 });
    const { woken, waiter } = waiterLog();
    const held = slots.take('b', waiter('b1'));
    expect(slots.take('b', waiter('b2')).granted).toBe(false);
    slots.forget('b2', 'b');
    if (held.granted) held.release();
    expect(woken).toEqual([]);
  });
});

describe('takingTurns (the order admitted deliveries are queued in)', () => {
  it("queues one of each biller's at a time, so a biller's share never lines up in front of another's first", () => {
    expect(takingTurns([['b1', 'b2', 'b3', 'b4'], ['a1'], ['c1', 'c2']])).toEqual(['b1', 'a1', 'c1', 'b2', 'c2', 'b3', 'b4']);
    expect(takingTurns([])).toEqual([]);
    expect(takingTurns([[], ['a1']])).toEqual(['a1']);
  });
});
