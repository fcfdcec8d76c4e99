import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import type { MandateStatus, PaymentStatus, ScheduleStatus } from '../../../src/platform/db/tables.ts';
import { eventSelection } from '../../../src/faces/webhooks/event-log-repository.ts';
import { PAYMENT_STATUSES } from '../../../src/collections/payments/payment-transitions.ts';
import { listPaymentsOfSchedules } from '../../../src/collections/payments/payment-repository.ts';
import { settleSchedules, settleSchedulesOfPayments } from '../../../src/collections/schedules/schedule-settlement-repository.ts';
import { recordScheduleUpdatedEvents } from '../../../src/collections/schedules/schedule-event-repository.ts';
import { scheduleOutcome } from '../../../src/collections/schedules/schedule-outcome.ts';
import { SCHEDULE_STATUSES, scheduleResponseSchema, toScheduleResource } from '../../../src/collections/schedules/schedule-resource.ts';
import { createTestDatabase, type TestDatabase } from '../../support/database.ts';
import {
  createBiller,
  createEmployee,
  createEmployer,
  createMandateRow,
  createPaymentRequestRow,
  createPayroll,
  createPayrollProvider,
  createScheduleRow,
  futureMonthlyPayDates,
} from '../../support/factories.ts';

// settleSchedules (the statement every path that ends an instalment runs) against scheduleOutcome (the
// rule): schedules and their instalments built with the factories, settled by the real statement,
// compared with the rule; and each schedule.updated it writes (built in SQL) against toScheduleResource,
// what GET /schedules/{id} answers.

let database: TestDatabase;
let biller: IssuedCredentials;
const MANDATE_STATUSES_USED = ['active', 'suspended', 'revoked', 'expired'] as const satisfies readonly MandateStatus[];
const mandates = new Map<MandateStatus, Awaited<ReturnType<typeof createMandateRow>>>();
beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.db;
  const provider = await createPayrollProvider(db);
  const employer = await createEmployer(db, provider.id);
  const payroll = await createPayroll(db, { providerId: provider.id, employerId: employer.id, payDates: futureMonthlyPayDates(2) });
  const { employee } = await createEmployee(db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  biller = await createBiller(db);
  for (const status of MANDATE_STATUSES_USED) {
    mandates.set(status, await createMandateRow(db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id, status }));
  }
});
afterAll(async () => database?.drop());

interface ScheduleSpec {
  status: ScheduleStatus;
  mandateStatus: (typeof MANDATE_STATUSES_USED)[number];
  instalments: PaymentStatus[];
  /** Passed to settleSchedules (the path that ended an instalment names it). */
  touched: boolean;
}

/** What each status has collected of 1,000: a pending one may carry what an earlier pay date collected. */
const COLLECTED: Record<PaymentStatus, number> = {
  pending: 300,
  instructed: 0,
  collected: 1_000,
  paid_out: 1_000,
  partially_collected: 400,
  failed: 0,
  cancelled: 0,
};

async function buildSchedule(spec: ScheduleSpec) {
  const mandate = mandates.get(spec.mandateStatus)!;
  const schedule = await createScheduleRow(database.db, {
    mandate,
    status: spec.status,
    totalAmount: 1_000 * Math.max(1, spec.instalments.length),
    instalmentCount: Math.max(1, spec.instalments.length),
  });
  for (const [i, status] of spec.instalments.entries()) {
    await createPaymentRequestRow(database.db, {
      mandate,
      status,
      amount: 1_000,
      collectedAmount: COLLECTED[status],
      dueDate: i % 2 === 0 ? null : '2099-12-31',
      schedule: { id: schedule.id, instalmentNumber: i + 1 },
    });
  }
  return schedule;
}

async function schedulesNow(ids: readonly string[]) {
  const rows = await database.db.selectFrom('schedules').selectAll().where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

async function scheduleEvents(ids: readonly string[]) {
  return database.db.selectFrom('events').select(eventSelection).where('type', '=', 'schedule.updated').where('resource_id', 'in', ids).orderBy('sequence').execute();
}

/** Each event's data is the schedule as GET /schedules/{id} shows it now, and valid against its schema. */
async function expectEventsShowSchedulesAsTheyAre(ids: readonly string[]) {
  const events = await scheduleEvents(ids);
  const rows = await schedulesNow(ids);
  const payments = await listPaymentsOfSchedules(database.db, ids);
  for (const event of events) {
    const payload = event.payload as { id: string; type: string; created_at: string; data: unknown };
    const resource = toScheduleResource(
      rows.get(event.resource_id)!,
      payments.filter((p) => p.schedule_id === event.resource_id),
    );
    expect(payload.data).toEqual(resource);
    expect(scheduleResponseSchema.parse(payload.data)).toEqual(resource);
    expect(payload).toMatchObject({ id: event.id, type: 'schedule.updated', created_at: event.created_at.toISOString() });
    expect(event).toMatchObject({ resource_type: 'schedule', biller_client_id: biller.clientId });
  }
  return events;
}

/** Settles the touched schedules for real; returns each schedule's status, reason and version after, and the count. */
async function settle(specs: readonly ScheduleSpec[]) {
  const schedules = [];
  for (const spec of specs) schedules.push(await buildSchedule(spec));
  const ids = schedules.map((s) => s.id);
  const settled = await settleSchedules(
    database.db,
    schedules.filter((_, i) => specs[i]!.touched).map((s) => s.id),
  );
  const byId = await schedulesNow(ids);
  const events = await expectEventsShowSchedulesAsTheyAre(ids);
  return {
    settled,
    after: schedules.map((s) => {
      const row = byId.get(s.id)!;
      return { status: row.status, reason: row.status_reason, version: row.version, events: events.filter((e) => e.resource_id === s.id).length };
    }),
    ids,
  };
}

/** What the rule says: the status, reason and version after (and whether it moved, with its one event) for each schedule. */
function expected(specs: readonly ScheduleSpec[]) {
  const after = specs.map((spec) => {
    const next = spec.touched ? scheduleOutcome({ status: spec.status, mandateStatus: spec.mandateStatus, instalments: spec.instalments }) : null;
    // createScheduleRow gives a settled schedule no reason: only the settlement writes one.
    return next ? { status: next.status, reason: next.reason, version: 2, events: 1 } : { status: spec.status, reason: null, version: 1, events: 0 };
  });
  return { settled: after.filter((a) => a.version === 2).length, after };
}

describe('settleSchedules settles schedules as scheduleOutcome says (table)', () => {
  const TABLE: Array<[ScheduleStatus, ScheduleSpec['mandateStatus'], PaymentStatus[], ScheduleStatus, string | null]> = [
    ['active', 'active', ['collected', 'paid_out'], 'completed', 'all_instalments_collected'],
    ['active', 'active', ['collected', 'failed'], 'errored', 'instalment_failed'],
    ['active', 'active', ['failed', 'pending'], 'errored', 'instalment_failed'],
    ['active', 'active', ['collected', 'pending'], 'active', null],
    ['active', 'active', ['collected', 'instructed'], 'active', null],
    ['active', 'active', ['collected', 'partially_collected'], 'errored', 'instalments_not_collected_in_full'],
    ['active', 'active', ['cancelled', 'partially_collected'], 'errored', 'instalments_not_collected_in_full'],
    ['active', 'active', ['collected', 'cancelled'], 'cancelled', 'instalments_cancelled'],
    ['active', 'suspended', ['cancelled', 'cancelled'], 'cancelled', 'instalments_cancelled'],
    ['active', 'revoked', ['cancelled', 'cancelled'], 'cancelled', 'mandate_revoked'],
    ['active', 'revoked', ['paid_out', 'cancelled'], 'cancelled', 'mandate_revoked'],
    ['active', 'expired', ['cancelled'], 'cancelled', 'mandate_ended'],
    ['active', 'revoked', ['instructed', 'cancelled'], 'active', null],
    ['active', 'active', [], 'active', null],
    ['errored', 'active', ['collected', 'collected'], 'errored', null],
    ['errored', 'revoked', ['cancelled'], 'errored', null],
    ['completed', 'active', ['failed'], 'completed', null],
    ['cancelled', 'active', ['collected'], 'cancelled', null],
    ['cancelled', 'active', ['failed'], 'cancelled', null],
  ];

  it.each(TABLE)('%s schedule on a %s mandate with instalments %j -> %s (%s)', async (status, mandateStatus, instalments, after, reason) => {
    const specs = [{ status, mandateStatus, instalments, touched: true }];
    const want = expected(specs);
    expect(want.after[0]!).toMatchObject({ status: after, reason });
    const got = await settle(specs);
    expect({ settled: got.settled, after: got.after }).toEqual(want);
  });

  it('moves only the schedules it is given', async () => {
    const specs: ScheduleSpec[] = [
      { status: 'active', mandateStatus: 'active', instalments: ['collected'], touched: false },
      { status: 'active', mandateStatus: 'active', instalments: ['failed'], touched: false },
      { status: 'active', mandateStatus: 'active', instalments: ['paid_out'], touched: true },
    ];
    const got = await settle(specs);
    expect(got.settled).toBe(1);
    expect(got.after.map((a) => a.status)).toEqual(['active', 'active', 'completed']);
    expect(expected(specs).after.map((a) => a.status)).toEqual(['active', 'active', 'completed']);
  });

  it('is idempotent: settling the same schedules again moves nothing and writes no second event', async () => {
    const specs: ScheduleSpec[] = [
      { status: 'active', mandateStatus: 'revoked', instalments: ['collected', 'cancelled'], touched: true },
      { status: 'active', mandateStatus: 'active', instalments: ['partially_collected', 'collected'], touched: true },
    ];
    const first = await settle(specs);
    expect(first.settled).toBe(2);
    expect(await settleSchedules(database.db, first.ids)).toBe(0);
    expect(await settleSchedules(database.db, [...first.ids, ...first.ids])).toBe(0);
    const events = await scheduleEvents(first.ids);
    expect(events).toHaveLength(2);
    expect((await schedulesNow(first.ids)).get(first.ids[0]!)).toMatchObject({ status: 'cancelled', status_reason: 'mandate_revoked', version: 2 });
  });

  it('settles the schedules of payment requests (settleSchedulesOfPayments), ignoring requests of no schedule', async () => {
    const mandate = mandates.get('active')!;
    const schedule = await buildSchedule({ status: 'active', mandateStatus: 'active', instalments: ['collected', 'cancelled'], touched: true });
    const instalments = await listPaymentsOfSchedules(database.db, [schedule.id]);
    const single = await createPaymentRequestRow(database.db, { mandate, status: 'cancelled' });
    expect(await settleSchedulesOfPayments(database.db, [single.id, ...instalments.map((p) => p.id)])).toBe(1);
    expect(await settleSchedulesOfPayments(database.db, [single.id])).toBe(0);
    expect(await settleSchedulesOfPayments(database.db, [])).toBe(0);
    expect((await schedulesNow([schedule.id])).get(schedule.id)).toMatchObject({ status: 'cancelled', status_reason: 'instalments_cancelled' });
  });

  it('settles nothing when given no schedules', async () => {
    expect(await settleSchedules(database.db, [])).toBe(0);
  });
});

describe('schedule.updated built in SQL is toScheduleResource', () => {
  it('for every field: metadata, due dates, instants, instalments in order and what is still expected of each', async () => {
    const specs: ScheduleSpec[] = [
      {
        status: 'active',
        mandateStatus: 'active',
        instalments: ['pending', 'instructed', 'collected', 'cancelled', 'partially_collected', 'failed', 'paid_out'],
        touched: false,
      },
      { status: 'errored', mandateStatus: 'revoked', instalments: ['instructed'], touched: false },
      { status: 'active', mandateStatus: 'active', instalments: [], touched: false },
    ];
    const schedules = [];
    for (const spec of specs) schedules.push(await buildSchedule(spec));
    const ids = schedules.map((s) => s.id);
    await database.db
      .updateTable('schedules')
      .set({ metadata: JSON.stringify({ agreement: 'AGR-1', nested: { n: 1, list: [true, null, 'x'] } }), status_reason: null })
      .where('id', '=', ids[0]!)
      .execute();
    await database.db.updateTable('schedules').set({ status_reason: 'instalment_refused' }).where('id', '=', ids[1]!).execute();
    expect(await recordScheduleUpdatedEvents(database.db, ids)).toBe(3);
    const events = await expectEventsShowSchedulesAsTheyAre(ids);
    expect(events).toHaveLength(3);
    const first = (events.find((e) => e.resource_id === ids[0])!.payload as { data: { expected_payments: unknown[]; instalments: unknown[] } }).data;
    expect(first.instalments).toHaveLength(7);
    // pending (1,000 less the 300 carried) and instructed.
    expect(first.expected_payments).toEqual([
      expect.objectContaining({ instalment_number: 1, amount: 700 }),
      expect.objectContaining({ instalment_number: 2, amount: 1_000 }),
    ]);
    expect(await recordScheduleUpdatedEvents(database.db, [])).toBe(0);
  });
});

describe('settleSchedules settles schedules as scheduleOutcome says (property)', () => {
  const spec = fc.record({
    status: fc.oneof({ arbitrary: fc.constant<ScheduleStatus>('active'), weight: 3 }, { arbitrary: fc.constantFrom(...SCHEDULE_STATUSES), weight: 1 }),
    mandateStatus: fc.constantFrom(...MANDATE_STATUSES_USED),
    // Weighted to the statuses that end an instalment, so that schedules settle as often as they do not.
    instalments: fc.array(
      fc.oneof({ arbitrary: fc.constantFrom<PaymentStatus>('collected', 'paid_out', 'cancelled'), weight: 6 }, { arbitrary: fc.constantFrom(...PAYMENT_STATUSES), weight: 1 }),
      { maxLength: 4 },
    ),
    touched: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
  });

  it('a batch of schedules, some not touched', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 5 }), async (specs) => {
        const got = await settle(specs);
        expect({ settled: got.settled, after: got.after }).toEqual(expected(specs));
      }),
      { numRuns: 40 },
    );
    // Shrinking a failure re-builds schedules: give it time to print the smallest case.
  }, 120_000);
});
