import { z } from 'zod';
import type { PayrollsTable } from '../../platform/db/tables.ts';
import { payrollRegionSchema } from '../payroll-providers/payroll-provider-resource.ts';
import { paymentRunFrequencySchema } from '../payroll-providers/reference-schemas.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { currencySchema, isoInstant, uuidSchema } from '../../platform/shared/schemas.ts';
import type { Selectable } from 'kysely';

const frequency = paymentRunFrequencySchema.meta({ description: 'How often the payroll pays', example: 'monthly' });

export const newPayrollSchema = z
  .strictObject({
    employer_id: uuidSchema,
    external_id: z.string().trim().min(1).max(200).meta({
      description: "The payroll's id at its provider; a UUID also becomes the payroll's id here, as the reference interface names payrolls by it",
      example: 'ACME-MONTHLY',
    }),
    name: z.string().trim().min(1).max(200).meta({ example: 'Acme Retail monthly payroll' }),
    payment_run_frequency: frequency,
    currency: currencySchema.default('GBP'),
    bank_holiday_region: payrollRegionSchema.optional().meta({ description: "Whose bank holidays its calendar follows; default: its provider's region" }),
  })
  .meta({
    id: 'NewPayroll',
    description: "A payroll of an employer; its payroll provider is the employer's",
    example: {
      employer_id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c71',
      external_id: 'ACME-MONTHLY',
      name: 'Acme Retail monthly payroll',
      payment_run_frequency: 'monthly',
      currency: 'GBP',
      bank_holiday_region: 'scotland',
    },
  });

export const payrollChangeSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    payment_run_frequency: frequency.optional(),
    bank_holiday_region: payrollRegionSchema
      .optional()
      .meta({ description: 'Whose bank holidays its calendar follows; a change moves the lock dates of its unlocked pay dates' }),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Why, kept in the audit log' }),
  })
  .meta({
    id: 'PayrollChange',
    description: 'What to change of a payroll; fields left out keep their value',
    example: { bank_holiday_region: 'scotland', reason: 'The payroll is run from the Glasgow office' },
  });

const payrollExample = {
  id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c72',
  employer_id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c71',
  payroll_provider_id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c70',
  external_id: 'ACME-MONTHLY',
  name: 'Acme Retail monthly payroll',
  payment_run_frequency: 'monthly',
  currency: 'GBP',
  bank_holiday_region: 'england-and-wales',
  go_live_date: '2027-01-29',
  calendar_synced_at: null,
  created_at: '2026-11-25T09:30:00.000Z',
};

export const payrollRecordSchema = z
  .object({
    id: z.uuid(),
    employer_id: z.uuid(),
    payroll_provider_id: z.uuid(),
    external_id: z.string(),
    name: z.string(),
    payment_run_frequency: paymentRunFrequencySchema,
    currency: z.string(),
    bank_holiday_region: payrollRegionSchema,
    go_live_date: z.iso.date().nullable().meta({
      description:
        'Its first pay date to collect: pay dates before it are never locked. Set by its first calendar, or PUT /admin/payrolls/{payroll_id}/go-live; null while it is not live',
    }),
    /** When its provider last told us its calendar; null for calendars set here. */
    calendar_synced_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'Payroll', description: 'A payroll: its employer, provider, frequency, currency and bank-holiday region', example: payrollExample });

export type PayrollRecord = z.infer<typeof payrollRecordSchema>;

export const payrollRecordEnvelopeSchema = z
  .object({ payroll: payrollRecordSchema })
  .meta({ id: 'PayrollEnvelope', description: 'One payroll', example: { payroll: payrollExample } });

export const payrollRecordsPageSchema = z
  .object({ payrolls: z.array(payrollRecordSchema), paging: pagingResponseSchema })
  .meta({ id: 'ListPayrollsResponse', description: 'A page of payrolls, newest first', example: { payrolls: [payrollExample], paging: pagingExample } });

export function toPayrollRecord(
  row: Pick<
    Selectable<PayrollsTable>,
    | 'id'
    | 'employer_id'
    | 'payroll_provider_id'
    | 'external_id'
    | 'name'
    | 'payment_run_frequency'
    | 'currency'
    | 'bank_holiday_region'
    | 'go_live_date'
    | 'calendar_synced_at'
    | 'created_at'
  >,
): PayrollRecord {
  return {
    id: row.id,
    employer_id: row.employer_id,
    payroll_provider_id: row.payroll_provider_id,
    external_id: row.external_id,
    name: row.name,
    payment_run_frequency: row.payment_run_frequency,
    currency: row.currency,
    bank_holiday_region: row.bank_holiday_region,
    go_live_date: row.go_live_date,
    calendar_synced_at: row.calendar_synced_at === null ? null : isoInstant(row.calendar_synced_at),
    created_at: isoInstant(row.created_at),
  };
}

export const payrollChangeResultSchema = z
  .object({
    payroll: payrollRecordSchema,
    lock_dates_changed: z.number().int().meta({ description: 'Unlocked pay dates whose lock date the change moved (a new bank-holiday region)' }),
  })
  .meta({
    id: 'PayrollChangeResult',
    description: 'The payroll, changed, and how many lock dates moved',
    example: { payroll: { ...payrollExample, bank_holiday_region: 'scotland' }, lock_dates_changed: 2 },
  });
