import { z } from 'zod';
import { isoDateSchema } from '../../platform/shared/schemas.ts';
import { bankHolidayRegionSchema } from './bank-holidays.ts';

// The pay-calendar rule ---------------------------------------------------------------------------

const cutoffWorkingDaysSchema = z
  .int()
  .min(0)
  .max(60)
  .meta({ description: "Working days between the payroll cut-off and the pay date (the pay date's own day is day 0)", example: 5 });

const ifNotWorkingDaySchema = z.enum(['earlier', 'later']).default('earlier').meta({
  id: 'IfNotWorkingDay',
  description: 'Where a scheduled pay date on a weekend or bank holiday goes: the working day before it (UK payroll practice) or after it',
  example: 'earlier',
});

export const lastWorkingDayRuleSchema = z
  .strictObject({
    frequency: z.literal('monthly'),
    pay_day: z.literal('last_working_day'),
    cutoff_working_days: cutoffWorkingDaysSchema,
  })
  .meta({
    id: 'LastWorkingDayPayRule',
    description: 'Monthly, on the last working day of each calendar month',
    example: { frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 },
  });

export const dayOfMonthRuleSchema = z
  .strictObject({
    frequency: z.literal('monthly'),
    pay_day: z.literal('day_of_month'),
    day_of_month: z.int().min(1).max(31).meta({ description: 'The day of the month; 29-31 mean the last day in shorter months', example: 25 }),
    if_not_working_day: ifNotWorkingDaySchema,
    cutoff_working_days: cutoffWorkingDaysSchema,
  })
  .meta({
    id: 'DayOfMonthPayRule',
    description: 'Monthly, on a fixed day of the month, moved to a working day',
    example: { frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, if_not_working_day: 'earlier', cutoff_working_days: 5 },
  });

export const anchoredPayRuleSchema = z
  .strictObject({
    frequency: z.enum(['weekly', 'fortnightly', 'four_weekly']),
    pay_day: z.literal('every_period_from_anchor'),
    anchor_date: isoDateSchema.meta({
      description: 'Any one scheduled pay date of the cycle (e.g. the first Friday paid); the others are whole periods before and after it',
      example: '2027-01-01',
    }),
    if_not_working_day: ifNotWorkingDaySchema,
    cutoff_working_days: cutoffWorkingDaysSchema,
  })
  .meta({
    id: 'AnchoredPayRule',
    description: 'Weekly, fortnightly or four-weekly: every 7, 14 or 28 days from an anchor date, moved to a working day',
    example: { frequency: 'weekly', pay_day: 'every_period_from_anchor', anchor_date: '2027-01-01', if_not_working_day: 'earlier', cutoff_working_days: 2 },
  });

export const payCalendarRuleSchema = z.discriminatedUnion('pay_day', [lastWorkingDayRuleSchema, dayOfMonthRuleSchema, anchoredPayRuleSchema]).meta({
  id: 'PayCalendarRule',
  description: "How a payroll's pay dates fall: pay_day says which rule, and which fields it takes",
  example: { frequency: 'monthly', pay_day: 'last_working_day', cutoff_working_days: 5 },
});

export type PayCalendarRule = z.output<typeof payCalendarRuleSchema>;

/** Ten years of weekly pay dates is more than any provider publishes ahead; longer is a typo. */
export const MAX_HORIZON_DAYS = 3660;

export const generatePayCalendarRequestSchema = z
  .strictObject({
    rule: payCalendarRuleSchema,
    from: isoDateSchema.meta({ description: 'First day of the horizon: pay dates on or after it are generated', example: '2027-01-01' }),
    until: isoDateSchema.meta({ description: 'Last day of the horizon: pay dates on or before it are generated', example: '2027-12-31' }),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Why, kept in the audit log', example: 'New provider calendar for 2027' }),
  })
  .superRefine((request, ctx) => {
    if (request.until < request.from) ctx.addIssue({ code: 'custom', path: ['until'], message: 'must be on or after from' });
    else if ((Date.parse(request.until) - Date.parse(request.from)) / 86_400_000 > MAX_HORIZON_DAYS) {
      ctx.addIssue({ code: 'custom', path: ['until'], message: `must be at most ${MAX_HORIZON_DAYS} days after from` });
    }
  })
  .meta({
    id: 'GeneratePayCalendarRequest',
    description: 'A pay-calendar rule and the horizon to generate it for; the result replaces the unlocked pay dates in the horizon',
    example: {
      rule: { frequency: 'monthly', pay_day: 'day_of_month', day_of_month: 25, if_not_working_day: 'earlier', cutoff_working_days: 5 },
      from: '2027-01-01',
      until: '2027-12-31',
    },
  });

// Pay dates -----------------------------------------------------------------------------------------

export const payDateResourceSchema = z
  .object({
    pay_date: z.iso.date().meta({ description: 'The day employees are paid and deductions taken' }),
    payroll_cutoff_date: z.iso.date().meta({ description: "The payroll's last day for changes to this pay date" }),
    pay_period: z.string().meta({ description: 'Tax week or month and the year the tax year started, e.g. 53-2026' }),
    lock_date: z.iso.date().meta({ description: "The night we lock this pay date's deductions: the cut-off less the provider's lead time in working days" }),
    locked: z.boolean().meta({ description: 'The nightly run has locked it: its dates can no longer change' }),
    locked_at: z.iso.datetime().nullable().meta({ description: 'When it was last locked: a re-run locks it again' }),
    first_locked_at: z.iso.datetime().nullable().meta({ description: 'When it was first locked, kept when a re-run locks it again' }),
  })
  .meta({
    id: 'AdminPayDate',
    description: "One pay date of a payroll's calendar",
    example: {
      pay_date: '2027-01-29',
      payroll_cutoff_date: '2027-01-22',
      pay_period: '10-2026',
      lock_date: '2027-01-20',
      locked: false,
      locked_at: null,
      first_locked_at: null,
    },
  });

export type PayDateResource = z.infer<typeof payDateResourceSchema>;

export const payrollPayDatesSchema = z
  .object({
    payroll_id: z.uuid(),
    bank_holiday_region: bankHolidayRegionSchema,
    pay_dates: z.array(payDateResourceSchema),
    go_live_date: z.iso
      .date()
      .nullable()
      .meta({ description: "The payroll's first pay date to collect: pay dates before it are never locked; null while the payroll is not live" }),
  })
  .meta({
    id: 'PayrollPayDates',
    description: "A payroll's calendar, every pay date in date order, and the region whose bank holidays it keeps",
    example: {
      payroll_id: '0190f1d2-8c1e-7a3b-9d4e-5f6a7b8c9d0e',
      bank_holiday_region: 'scotland',
      pay_dates: [
        { pay_date: '2027-01-29', payroll_cutoff_date: '2027-01-22', pay_period: '10-2026', lock_date: '2027-01-20', locked: false, locked_at: null, first_locked_at: null },
      ],
      go_live_date: '2027-01-29',
    },
  });

export type PayrollPayDates = z.infer<typeof payrollPayDatesSchema>;

export const payCalendarChangeSchema = z
  .object({
    payroll_id: z.uuid(),
    source: z.enum(['rule', 'csv', 'provider']).meta({ description: 'Where the new calendar came from' }),
    from: z.iso.date().meta({ description: 'First day of the range the new calendar replaced' }),
    until: z.iso.date().meta({ description: 'Last day of the range the new calendar replaced' }),
    added: z.array(z.iso.date()).meta({ description: 'Pay dates that are new' }),
    changed: z.array(z.iso.date()).meta({ description: 'Unlocked pay dates whose cut-off, period or lock date changed' }),
    removed: z.array(z.iso.date()).meta({ description: 'Unlocked pay dates in the range the new calendar no longer has' }),
    unchanged: z.array(z.iso.date()).meta({ description: 'Pay dates left as they were (every locked one among them)' }),
    pay_dates: z.array(payDateResourceSchema).meta({ description: 'The calendar in the range, as it is now' }),
    go_live_date: z.iso.date().nullable().meta({
      description:
        "The payroll's go-live date, its first pay date to collect: nothing before it is locked. A payroll's first calendar sets it to the first pay date whose lock date is still ahead; null while it has none",
    }),
    warnings: z.array(z.string()).meta({
      description:
        'What the operator should know: pay dates whose lock dates have already passed, before the go-live date (never collected) or after it (locked by the next nightly run at once)',
    }),
  })
  .meta({
    id: 'PayCalendarChange',
    description: "What a new calendar did to a payroll's pay dates in its range",
    example: {
      payroll_id: '0190f1d2-8c1e-7a3b-9d4e-5f6a7b8c9d0e',
      source: 'rule',
      from: '2027-01-01',
      until: '2027-01-31',
      added: ['2027-01-29'],
      changed: [],
      removed: ['2027-01-25'],
      unchanged: [],
      pay_dates: [
        { pay_date: '2027-01-29', payroll_cutoff_date: '2027-01-22', pay_period: '10-2026', lock_date: '2027-01-20', locked: false, locked_at: null, first_locked_at: null },
      ],
      go_live_date: '2027-01-29',
      warnings: [],
    },
  });

export type PayCalendarChange = z.infer<typeof payCalendarChangeSchema>;

export const goLiveRequestSchema = z
  .strictObject({
    go_live_date: z.iso.date().meta({ description: 'The first pay date to collect (or any day: the first pay date on or after it is)' }),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Why, kept in the audit log' }),
  })
  .meta({ id: 'GoLiveRequest', description: "Sets a payroll's go-live date", example: { go_live_date: '2027-01-29', reason: 'Employer signed off the first month' } });

export const payrollGoLiveSchema = z
  .object({
    payroll_id: z.uuid(),
    go_live_date: z.iso.date().meta({ description: 'Pay dates before it are never locked or caught up' }),
    previous_go_live_date: z.iso.date().nullable(),
    first_pay_date_collected: z.iso.date().nullable().meta({ description: 'Its first unlocked pay date on or after the go-live date; null when the calendar has none yet' }),
    warnings: z
      .array(z.string())
      .meta({ description: 'Pay dates whose lock dates have already passed: before the go-live date (never collected) or after it (locked by the next nightly run at once)' }),
  })
  .meta({
    id: 'PayrollGoLive',
    description: "A payroll's go-live date, as set",
    example: {
      payroll_id: '0190f1d2-8c1e-7a3b-9d4e-5f6a7b8c9d0e',
      go_live_date: '2027-01-29',
      previous_go_live_date: null,
      first_pay_date_collected: '2027-01-29',
      warnings: [],
    },
  });

export type PayrollGoLive = z.infer<typeof payrollGoLiveSchema>;

// Bank holidays --------------------------------------------------------------------------------------

export const bankHolidayResourceSchema = z
  .object({
    region: bankHolidayRegionSchema,
    date: z.iso.date(),
    name: z.string(),
    source: z.enum(['library', 'ad_hoc']).meta({
      description: 'library: the published bank holidays of the region; ad_hoc: a one-off day an operator added',
    }),
    added_by: z.string().nullable().meta({ description: 'Who added an ad-hoc day; null for library days' }),
    created_at: z.iso.datetime().nullable().meta({ description: 'When an ad-hoc day was added; null for library days' }),
  })
  .meta({
    id: 'BankHoliday',
    description: 'A day on which banks and payroll do not work in a region',
    example: { region: 'scotland', date: '2027-11-30', name: 'St Andrew’s Day', source: 'library', added_by: null, created_at: null },
  });

export type BankHolidayResource = z.infer<typeof bankHolidayResourceSchema>;

export const bankHolidayListSchema = z.object({ region: bankHolidayRegionSchema, year: z.int(), bank_holidays: z.array(bankHolidayResourceSchema) }).meta({
  id: 'BankHolidayList',
  description: "A region's bank holidays in one year, library and ad-hoc, in date order",
  example: {
    region: 'scotland',
    year: 2027,
    bank_holidays: [{ region: 'scotland', date: '2027-01-01', name: "New Year's Day", source: 'library', added_by: null, created_at: null }],
  },
});

export const addBankHolidayRequestSchema = z
  .strictObject({
    region: bankHolidayRegionSchema,
    date: isoDateSchema,
    name: z.string().trim().min(1).max(200).meta({ example: 'State funeral' }),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Kept in the audit log', example: 'Proclamation of 12 September' }),
  })
  .meta({
    id: 'AddBankHolidayRequest',
    description: "A one-off bank holiday for a region; the lock dates of the region's unlocked pay dates are recomputed",
    example: { region: 'england-and-wales', date: '2027-06-07', name: 'State funeral', reason: 'Proclamation of 12 September' },
  });

export const bankHolidayChangeSchema = z
  .object({
    bank_holiday: bankHolidayResourceSchema,
    lock_dates_changed: z.int().meta({ description: "How many unlocked pay dates of the region's payrolls got a new lock date" }),
  })
  .meta({
    id: 'BankHolidayChange',
    description: 'The ad-hoc day added or removed, and how many lock dates moved because of it',
    example: {
      bank_holiday: {
        region: 'england-and-wales',
        date: '2027-06-07',
        name: 'State funeral',
        source: 'ad_hoc',
        added_by: 'client 0190f1d2-8c1e-7a3b-9d4e-5f6a7b8c9d0e',
        created_at: '2027-05-20T09:30:00.000Z',
      },
      lock_dates_changed: 3,
    },
  });

export type BankHolidayChange = z.infer<typeof bankHolidayChangeSchema>;
