import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { MandateStatus, PaymentStatus, ScheduleStatus } from '../../../src/platform/db/tables.ts';
import { listPaymentsOfSchedules } from '../../../src/collections/payments/payment-repository.ts';
import { scheduleOutcome } from '../../../src/collections/schedules/schedule-outcome.ts';
import { scheduleResponseSchema, toScheduleResource } from '../../../src/collections/schedules/schedule-resource.ts';
import { databaseForMigration } from '../../support/migration-database.ts';
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

// 20261220000000_schedule_settlement: schedules that had settled get the reason they settled for,
// schedules stuck active (nothing of them can collect any more) settle by the rule with a
// schedule.updated event whose data is what toScheduleResource gives, and the way down takes it all
// back. A database of its own, migrated step by step.

const MIGRATION = '20261220000000_schedule_settlement';
const migration = databaseForMigration(MIGRATION);
const BEFORE = migration.before;
const migrateTo = (target: string) => migration.migrateTo(target);

interface Case {
  label: string;
  status: ScheduleStatus;
  mandate: MandateStatus;
  instalments: PaymentStatus[];
  /** The lock's refusal gave the failed instalment a status_reason. */
  refused?: boolean;
  /** What the migration leaves: status, reason, and whether it settled it (one event, one version more). */
  after: { status: ScheduleStatus; reason: string | null; settled: boolean };
}

const CASES: Case[] = [
  {
    label: 'completed',
    status: 'completed',
    mandate: 'active',
    instalments: ['collected', 'paid_out'],
    after: { status: 'completed', reason: 'all_instalments_collected', settled: false },
  },
  {
    label: 'cancelled by the biller',
    status: 'cancelled',
    mandate: 'active',
    instalments: ['collected', 'cancelled'],
    after: { status: 'cancelled', reason: 'cancelled_by_biller', settled: false },
  },
  {
    label: 'errored on a failure',
    status: 'errored',
    mandate: 'active',
    instalments: ['failed', 'pending'],
    after: { status: 'errored', reason: 'instalment_failed', settled: false },
  },
  {
    label: 'errored by the lock',
    status: 'errored',
    mandate: 'active',
    instalments: ['failed'],
    refused: true,
    after: { status: 'errored', reason: 'instalment_refused', settled: false },
  },
  {
    label: 'stuck: cancelled with its mandate',
    status: 'active',
    mandate: 'revoked',
    instalments: ['collected', 'cancelled'],
    after: { status: 'cancelled', reason: 'mandate_revoked', settled: true },
  },
  {
    label: 'stuck: cancelled with an ended mandate',
    status: 'active',
    mandate: 'expired',
    instalments: ['cancelled'],
    after: { status: 'cancelled', reason: 'mandate_ended', settled: true },
  },
  {
    label: 'stuck: cancelled one by one',
    status: 'active',
    mandate: 'active',
    instalments: ['cancelled', 'cancelled'],
    after: { status: 'cancelled', reason: 'instalments_cancelled', settled: true },
  },
  {
    label: 'stuck: partly collected',
    status: 'active',
    mandate: 'active',
    instalments: ['collected', 'partially_collected'],
    after: { status: 'errored', reason: 'instalments_not_collected_in_full', settled: true },
  },
  {
    label: 'stuck: failed, one still to come',
    status: 'active',
    mandate: 'active',
    instalments: ['failed', 'pending'],
    after: { status: 'errored', reason: 'instalment_failed', settled: true },
  },
  {
    label: 'stuck: collected in full',
    status: 'active',
    mandate: 'active',
    instalments: ['paid_out', 'collected'],
    after: { status: 'completed', reason: 'all_instalments_collected', settled: true },
  },
  { label: 'running', status: 'active', mandate: 'active', instalments: ['collected', 'instructed'], after: { status: 'active', reason: null, settled: false } },
];

describe(MIGRATION, () => {
  it('gives settled schedules their reason, settles the stuck ones with their events, and takes it back on the way down', async () => {
    await migrateTo(BEFORE);
    const provider = await createPayrollProvider(migration.db);
    const employer = await createEmployer(migration.db, provider.id);
    const payroll = await createPayroll(migration.db, { providerId: provider.id, employerId: employer.id, payDates: futureMonthlyPayDates(2) });
    const { employee } = await createEmployee(migration.db, { providerId: provider.id, payrollId: payroll.id, employerId: employer.id });
    const biller = await createBiller(migration.db);
    const mandates = new Map<MandateStatus, Awaited<ReturnType<typeof createMandateRow>>>();
    for (const status of new Set(CASES.map((c) => c.mandate))) {
      mandates.set(status, await createMandateRow(migration.db, { billerClientId: biller.clientId, employeeId: employee.id, payrollId: payroll.id, status }));
    }
    const ids: string[] = [];
    for (const c of CASES) {
      const mandate = mandates.get(c.mandate)!;
      const schedule = await createScheduleRow(migration.db, { mandate, status: c.status, totalAmount: 1_000 * c.instalments.length, instalmentCount: c.instalments.length });
      for (const [i, status] of c.instalments.entries()) {
        const collected = status === 'collected' || status === 'paid_out' ? 1_000 : status === 'partially_collected' ? 400 : status === 'pending' ? 250 : 0;
        const payment = await createPaymentRequestRow(migration.db, {
          mandate,
          status,
          amount: 1_000,
          collectedAmount: collected,
          schedule: { id: schedule.id, instalmentNumber: i + 1 },
        });
        if (c.refused && status === 'failed')
          await migration.db.updateTable('payment_requests').set({ status_reason: 'amount over the limit' }).where('id', '=', payment.id).execute();
      }
      ids.push(schedule.id);
    }
    await sql`update schedules set metadata = '{"plan": "P-1"}'::jsonb where id = ${ids[4]!}`.execute(migration.db);

    await migrateTo(MIGRATION);

    const rows = new Map((await migration.db.selectFrom('schedules').selectAll().where('id', 'in', ids).execute()).map((row) => [row.id, row]));
    const payments = await listPaymentsOfSchedules(migration.db, ids);
    const events = await migration.db
      .selectFrom('events')
      .select(['resource_id', 'resource_type', 'biller_client_id', 'payload', 'id'])
      .where('type', '=', 'schedule.updated')
      .execute();
    for (const [index, c] of CASES.entries()) {
      const row = rows.get(ids[index]!)!;
      expect({ status: row.status, reason: row.status_reason, version: row.version }, c.label).toEqual({
        status: c.after.status,
        reason: c.after.reason,
        version: c.after.settled ? 2 : 1,
      });
      if (c.status === 'active') {
        // The migration's frozen rule is the rule as of this migration.
        const outcome = scheduleOutcome({ status: 'active', mandateStatus: c.mandate, instalments: c.instalments });
        expect(outcome && { status: outcome.status, reason: outcome.reason }, c.label).toEqual(c.after.settled ? { status: c.after.status, reason: c.after.reason } : null);
      }
      const own = events.filter((e) => e.resource_id === row.id);
      expect(own, c.label).toHaveLength(c.after.settled ? 1 : 0);
      if (own[0]) {
        const resource = toScheduleResource(
          row,
          payments.filter((p) => p.schedule_id === row.id),
        );
        const payload = own[0].payload as { id: string; type: string; data: unknown };
        expect(payload.data, c.label).toEqual(resource);
        expect(scheduleResponseSchema.parse(payload.data)).toEqual(resource);
        expect(payload).toMatchObject({ id: own[0].id, type: 'schedule.updated' });
        expect(own[0]).toMatchObject({ resource_type: 'schedule', biller_client_id: biller.clientId });
      }
    }
    expect(events).toHaveLength(CASES.filter((c) => c.after.settled).length);
    // One still to come stays expected.
    const failedOneToCome = events.find((e) => e.resource_id === ids[8])!.payload as { data: { expected_payments: Array<{ amount: number }> } };
    expect(failedOneToCome.data.expected_payments.map((p) => p.amount)).toEqual([750]);

    await migrateTo(BEFORE);
    const { rows: columns } = await sql<{ column_name: string }>`
      select column_name from information_schema.columns where table_schema = 'public' and table_name = 'schedules'
    `.execute(migration.db);
    expect(columns.map((c) => c.column_name)).not.toContain('status_reason');
    const { rows: left } = await sql<{ n: number }>`select count(*)::int as n from events where type = 'schedule.updated'`.execute(migration.db);
    expect(left[0]!.n).toBe(0);
    const { rows: check } = await sql<{ definition: string }>`
      select pg_get_constraintdef(oid) as definition from pg_constraint where conname = 'events_type_check'
    `.execute(migration.db);
    expect(check[0]!.definition).not.toContain('schedule.updated');
    expect(check[0]!.definition).toContain('remittance.reversed');
    // Up again, cleanly.
    await migrateTo(MIGRATION);
  });
});
