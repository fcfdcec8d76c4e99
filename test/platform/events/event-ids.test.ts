import { describe, expect, it } from 'vitest';
import { buildEvent } from '../../../src/platform/events/outbox.ts';

// Events built in TypeScript get time-ordered ids like those built in SQL (insertPaymentUpdatedEvents,
// whose test checks them the same way), so the events table's key grows at its right edge either way.

const VERSION_7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondsOf = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('buildEvent', () => {
  it('gives the event a version 7 id carrying the event’s own instant, in the payload too', () => {
    const now = new Date('2026-11-24T10:15:30.123Z');
    const event = buildEvent({ type: 'mandate.updated', billerClientId: crypto.randomUUID(), resourceType: 'mandate', resourceId: crypto.randomUUID(), data: {} }, now);
    expect(event.id).toMatch(VERSION_7);
    expect(millisecondsOf(event.id)).toBe(now.getTime());
    expect(event.payload).toMatchObject({ id: event.id, created_at: now.toISOString() });
  });

  it('never repeats an id within one instant', () => {
    const now = new Date();
    const ids = Array.from(
      { length: 1000 },
      () =>
        buildEvent({ type: 'payment_request.updated', billerClientId: crypto.randomUUID(), resourceType: 'payment_request', resourceId: crypto.randomUUID(), data: {} }, now)
          .id,
    );
    expect(new Set(ids).size).toBe(ids.length);
  });
});
