import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
// Fixed seed, so a failure here replays (test/support/property-seed.ts).
import '../../support/property-seed.ts';
import type { IssuedCredentials } from '../../../src/directory/auth/clients-service.ts';
import type { PaymentStatus, ScheduleStatus } from '../../../src/platform/db/tables.ts';
import { PAYMENT_STATUSES } from '../../../src/collections/payments/payment-transitions.ts';
import { settleSchedules } from '../../../src/cycle/reconciliation/reconciliation-repository.ts';
import { scheduleOutcome } from '../../../src/collections/schedules/schedule-outcome.ts';
import { SCHEDULE_STATUSES } from '../../../src/collections/schedules/schedule-resource.ts';
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

// settleSchedules (reconciliation's statement) against scheduleOutcome (the rule): schedules and
// their instalments built with the factories, settled by the real statement, compared with the rule.

let database: TestDatabase;
let biller: IssuedCredentials;
let mandate: Awaited<ReturnType<typeof createMandateRow>>;
beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.db;
  const provider = await createPayrollProvider(db);
  const employer = await createEmployer(db, provider.id);
  const payroll = await createPayroll(db, { providerId: provider.id, employerId: employer.id, payDates: futureMonthlyPayDates(2) });
  const { employee } = await createEmployee(db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
  biller = await createBiller(db);
  mandate = await createMandateRow(db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id });
});
afterAll(async () => database?.drop());

interface ScheduleSpec {
  status: ScheduleStatus;
  instalments: PaymentStatus[];
  /** Passed to settleSchedules (reconciliation touched it). */
  touched: boolean;
}

async function buildSchedule(spec: ScheduleSpec) {
  const schedule = await createScheduleRow(database.db, {
    mandate,
    status: spec.status,
    totalAmount: 1_000 * Math.max(1, spec.instalments.length),
    instalmentCount: Math.max(1, spec.instalments.length),
  });
  for (const [i, status] of spec.instalments.entries()) {
    const collected = status === 'collected' || status === 'paid_out' ? 1_000 : status === 'partially_collected' ? 400 : 0;
    await createPaymentRequestRow(database.db, {
      mandate,
      status,
      amount: 1_000,
      collectedAmount: collected,
      schedule: { id: schedule.id, instalmentNumber: i + 1 },
    });
  }
  return schedule;
}

/** Settles the touched schedules for real; returns each schedule's status and version after, and the count. */
async function settle(specs: readonly ScheduleSpec[]) {
  const schedules = [];
  for (const spec of specs) schedules.push(await buildSchedule(spec));
  const settled = await settleSchedules(
    database.db,
    schedules.filter((_, i) => specs[i]!.touched).map((s) => s.id),
  );
  const rows = await database.db
    .selectFrom('schedules')
    .select(['id', 'status', 'version'])
    .where(
      'id',
      'in',
      schedules.map((s) => s.id),
    )
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { settled, after: schedules.map((s) => byId.get(s.id)!) };
}

/** What the rule says: the status after (and whether it moved) for each schedule. */
function expected(specs: readonly ScheduleSpec[]) {
  const after = specs.map((spec) => {
    const next = spec.touched ? scheduleOutcome(spec.status, spec.instalments) : null;
    return { status: next ?? spec.status, version: next ? 2 : 1 };
  });
  return { settled: after.filter((a) => a.version === 2).length, after };
}

describe('settleSchedules settles schedules as scheduleOutcome says (table)', () => {
  const TABLE: Array<[ScheduleStatus, PaymentStatus[], ScheduleStatus]> = [
    ['active', ['collected', 'paid_out'], 'completed'],
    ['active', ['collected', 'failed'], 'errored'],
    ['active', ['failed', 'pending'], 'errored'],
    ['active', ['collected', 'pending'], 'active'],
    ['active', ['collected', 'instructed'], 'active'],
    ['active', ['collected', 'partially_collected'], 'active'],
    ['active', ['collected', 'cancelled'], 'active'],
    ['active', [], 'active'],
    ['errored', ['collected', 'collected'], 'errored'],
    ['completed', ['failed'], 'completed'],
    ['cancelled', ['collected'], 'cancelled'],
    ['cancelled', ['failed'], 'cancelled'],
  ];

  it.each(TABLE)('%s schedule with instalments %j -> %s', async (status, instalments, after) => {
    const specs = [{ status, instalments, touched: true }];
    const want = expected(specs);
    expect(want.after[0]!.status).toBe(after);
    const got = await settle(specs);
    expect({ settled: got.settled, after: got.after.map(({ status: s, version }) => ({ status: s, version })) }).toEqual(want);
  });

  it('moves only the schedules it is given', async () => {
    const specs = [
      { status: 'active' as const, instalments: ['collected' as const], touched: false },
      { status: 'active' as const, instalments: ['failed' as const], touched: false },
      { status: 'active' as const, instalments: ['paid_out' as const], touched: true },
    ];
    const got = await settle(specs);
    expect(got.settled).toBe(1);
    expect(got.after.map((a) => a.status)).toEqual(['active', 'active', 'completed']);
    expect(expected(specs).after.map((a) => a.status)).toEqual(['active', 'active', 'completed']);
  });

  it('settles nothing when given no schedules', async () => {
    expect(await settleSchedules(database.db, [])).toBe(0);
  });
});

describe('settleSchedules settles schedules as scheduleOutcome says (property)', () => {
  const spec = fc.record({
    status: fc.oneof({ arbitrary: fc.constant<ScheduleStatus>('active'), weight: 3 }, { arbitrary: fc.constantFrom(...SCHEDULE_STATUSES), weight: 1 }),
    // Weighted to collected and paid out, so that schedules complete as often as they do not.
    instalments: fc.array(
      fc.oneof({ arbitrary: fc.constantFrom<PaymentStatus>('collected', 'paid_out'), weight: 6 }, { arbitrary: fc.constantFrom(...PAYMENT_STATUSES), weight: 1 }),
      { maxLength: 4 },
    ),
    touched: fc.oneof({ arbitrary: fc.constant(true), weight: 4 }, { arbitrary: fc.constant(false), weight: 1 }),
  });

  it('a batch of schedules, some not touched', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 5 }), async (specs) => {
        const got = await settle(specs);
        expect({ settled: got.settled, after: got.after.map(({ status, version }) => ({ status, version })) }).toEqual(expected(specs));
      }),
      { numRuns: 40 },
    );
    // Shrinking a failure re-builds schedules: give it time to print the smallest case.
  }, 120_000);
});
