import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import type { BankHolidayChange, BankHolidayResource, PayCalendarChange, PayDateResource } from '../../directory/calendars/pay-calendar-resource.ts';
import type { BankHolidayRegion } from '../../platform/db/tables.ts';
import { InvalidError } from '../../platform/shared/domain-errors.ts';
import { secretBoxFor } from '../../platform/shared/secret-box.ts';
import { withDatabase } from './command-database.ts';
import { operatorName, parseDateOption, parseUuidOption, parseWholeNumber } from './options.ts';
import { BANK_HOLIDAY_REGIONS } from './vocabulary.ts';

const regionOption = () => new Option('--region <region>', 'bank-holiday region').choices(BANK_HOLIDAY_REGIONS).makeOptionMandatory();
const byOption = ['--by <name>', 'who makes the change (default: the OS user)'] as const;
const reasonOption = ['--reason <text>', 'why (kept in the audit log)'] as const;

function print(json: boolean | undefined, value: unknown, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : text);
}

function holidayLine(holiday: BankHolidayResource): string {
  const added = holiday.source === 'ad_hoc' ? `  added by ${holiday.added_by} at ${holiday.created_at}` : '';
  return `${holiday.date}  ${holiday.source.padEnd(7)}  ${holiday.name}${added}\n`;
}

function holidayChangeText(verb: string, change: BankHolidayChange): string {
  const { bank_holiday: holiday } = change;
  return `${verb} ${holiday.date} ${holiday.name} (${holiday.region}); ${change.lock_dates_changed} unlocked pay date${change.lock_dates_changed === 1 ? '' : 's'} got a new lock date\n`;
}

function payDateLine(payDate: PayDateResource, goLiveDate: string | null): string {
  const relocked = payDate.first_locked_at !== null && payDate.first_locked_at !== payDate.locked_at;
  const state = payDate.locked
    ? relocked
      ? `locked ${payDate.first_locked_at}, locked again by a re-run ${payDate.locked_at}`
      : `locked ${payDate.locked_at}`
    : goLiveDate === null || payDate.pay_date < goLiveDate
      ? 'open, not collected (before go-live)'
      : 'open';
  return `${payDate.pay_date}  cut-off ${payDate.payroll_cutoff_date}  period ${payDate.pay_period.padEnd(7)}  lock ${payDate.lock_date}  ${state}\n`;
}

/** Today in the service time zone, which decides whose lock dates have passed. */
async function serviceTodayOfCli(): Promise<string> {
  const { loadConfig } = await import('../../platform/config/config.ts');
  const { serviceToday } = await import('../../directory/calendars/lock-date.ts');
  return serviceToday(new Date(), loadConfig().SERVICE_TIME_ZONE);
}

function calendarChangeText(change: PayCalendarChange): string {
  const list = (dates: string[]) => (dates.length === 0 ? 'none' : dates.join(' '));
  return (
    [
      `Payroll ${change.payroll_id} calendar from ${change.source}, ${change.from} to ${change.until}:`,
      `  added     ${list(change.added)}`,
      `  changed   ${list(change.changed)}`,
      `  removed   ${list(change.removed)}`,
      `  unchanged ${change.unchanged.length}`,
      `  go-live   ${goLiveText(change.go_live_date)}`,
      '',
    ].join('\n') + change.pay_dates.map((payDate) => payDateLine(payDate, change.go_live_date)).join('')
  );
}

function goLiveText(goLiveDate: string | null): string {
  return goLiveDate === null ? 'none yet: nothing is collected (deductions payrolls go-live)' : `${goLiveDate} (the first pay date collected)`;
}

/** Warnings go to stderr, so they reach a person even when stdout is JSON for a script. */
function warn(change: PayCalendarChange): void {
  for (const warning of change.warnings) process.stderr.write(`warning: ${warning}\n`);
}

export function registerBankHolidayCommands(program: Command): void {
  const holidays = program
    .command('bank-holidays')
    .description('Bank holidays per region: the published ones (from the date-holidays library) and one-off days operators add');

  holidays
    .command('list')
    .description("A region's bank holidays in a year, each marked library or ad_hoc")
    .addOption(regionOption())
    .option('--year <year>', 'default: this year', parseWholeNumber)
    .option('--json', 'print as JSON')
    .action(async (options: { region: BankHolidayRegion; year?: number; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { serviceToday } = await import('../../directory/calendars/lock-date.ts');
      const { listBankHolidays } = await import('../../directory/calendars/bank-holiday-service.ts');
      const year = options.year ?? Number(serviceToday(new Date(), loadConfig().SERVICE_TIME_ZONE).slice(0, 4));
      await withDatabase(async (db) => {
        const bankHolidays = await listBankHolidays(db, options.region, year);
        print(options.json, { region: options.region, year, bank_holidays: bankHolidays }, bankHolidays.map(holidayLine).join(''));
      });
    });

  holidays
    .command('add')
    .description("Add a one-off bank holiday to a region; the lock dates of its payrolls' unlocked pay dates are recomputed (audited)")
    .addOption(regionOption())
    .requiredOption('--date <date>', 'YYYY-MM-DD', parseDateOption)
    .requiredOption('--name <name>', 'e.g. "State funeral"')
    .option(...reasonOption)
    .option(...byOption)
    .option('--json', 'print as JSON')
    .action(async (options: { region: BankHolidayRegion; date: string; name: string; reason?: string; by?: string; json?: boolean }) => {
      const { addBankHoliday } = await import('../../directory/calendars/bank-holiday-service.ts');
      await withDatabase(async (db) => {
        const change = await db.transaction().execute((trx) =>
          addBankHoliday(
            trx,
            { region: options.region, date: options.date, name: options.name },
            {
              actor: cliActor(operatorName(options.by)),
              reason: options.reason ?? null,
            },
          ),
        );
        print(options.json, change, holidayChangeText('Added', change));
      });
    });

  holidays
    .command('remove')
    .description('Remove a one-off bank holiday an operator added; lock dates are recomputed (audited)')
    .addOption(regionOption())
    .requiredOption('--date <date>', 'YYYY-MM-DD', parseDateOption)
    .option(...reasonOption)
    .option(...byOption)
    .option('--json', 'print as JSON')
    .action(async (options: { region: BankHolidayRegion; date: string; reason?: string; by?: string; json?: boolean }) => {
      const { removeBankHoliday } = await import('../../directory/calendars/bank-holiday-service.ts');
      await withDatabase(async (db) => {
        const change = await db
          .transaction()
          .execute((trx) => removeBankHoliday(trx, options.region, options.date, { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null }));
        print(options.json, change, holidayChangeText('Removed', change));
      });
    });
}

interface GenerateOptions {
  payroll: string;
  frequency: 'weekly' | 'fortnightly' | 'four_weekly' | 'monthly';
  payDay: 'last-working-day' | 'day-of-month' | 'anchor';
  day?: number;
  anchor?: string;
  ifNotWorkingDay: 'earlier' | 'later';
  cutoffWorkingDays: number;
  from: string;
  until: string;
  reason?: string;
  by?: string;
  json?: boolean;
}

/** The command line's words for a rule, as the API's rule (validated by the same schema). */
async function ruleOf(options: GenerateOptions) {
  const { payCalendarRuleSchema } = await import('../../directory/calendars/pay-calendar-resource.ts');
  const common = { frequency: options.frequency, cutoff_working_days: options.cutoffWorkingDays };
  const rule =
    options.payDay === 'last-working-day'
      ? { ...common, pay_day: 'last_working_day' }
      : options.payDay === 'day-of-month'
        ? { ...common, pay_day: 'day_of_month', day_of_month: options.day, if_not_working_day: options.ifNotWorkingDay }
        : { ...common, pay_day: 'every_period_from_anchor', anchor_date: options.anchor, if_not_working_day: options.ifNotWorkingDay };
  const parsed = payCalendarRuleSchema.safeParse(rule);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'rule'}: ${issue.message}`).join('; ');
    throw new InvalidError(
      'invalid-rule',
      `Invalid rule (${problems}): monthly takes --pay-day last-working-day or day-of-month --day N; weekly, fortnightly and four_weekly take --pay-day anchor --anchor DATE`,
    );
  }
  return parsed.data;
}

export function registerCalendarCommands(program: Command): void {
  const calendars = program.command('calendars').description("Payrolls' pay calendars: generate from a rule, import a CSV, sync from the provider, show");

  calendars
    .command('show')
    .description("A payroll's pay dates with cut-offs, pay periods, lock dates and whether each is locked")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { payroll: string; json?: boolean }) => {
      const { showPayDates } = await import('../../directory/calendars/calendar-service.ts');
      await withDatabase(async (db) => {
        const calendar = await showPayDates(db, options.payroll);
        const text = `Payroll ${calendar.payroll_id} (${calendar.bank_holiday_region} bank holidays), go-live ${goLiveText(calendar.go_live_date)}\n${calendar.pay_dates
          .map((payDate) => payDateLine(payDate, calendar.go_live_date))
          .join('')}`;
        print(options.json, calendar, text);
      });
    });

  calendars
    .command('generate')
    .description("Generate a payroll's pay dates from a rule for a horizon; they replace its unlocked pay dates there (locked ones must stay as they are) (audited)")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .addOption(new Option('--frequency <frequency>', 'pay frequency').choices(['weekly', 'fortnightly', 'four_weekly', 'monthly']).makeOptionMandatory())
    .addOption(
      new Option('--pay-day <rule>', 'last-working-day (monthly), day-of-month (monthly, with --day) or anchor (weekly-based, with --anchor)')
        .choices(['last-working-day', 'day-of-month', 'anchor'])
        .makeOptionMandatory(),
    )
    .option('--day <n>', 'day of the month, 1-31 (29-31: the last day of shorter months)', parseWholeNumber)
    .option('--anchor <date>', 'one scheduled pay date of the weekly, fortnightly or four-weekly cycle', parseDateOption)
    .addOption(new Option('--if-not-working-day <way>', 'move a pay day on a weekend or bank holiday').choices(['earlier', 'later']).default('earlier'))
    .requiredOption('--cutoff-working-days <n>', 'working days from the payroll cut-off to the pay date', parseWholeNumber)
    .requiredOption('--from <date>', 'first day of the horizon', parseDateOption)
    .requiredOption('--until <date>', 'last day of the horizon', parseDateOption)
    .option(...reasonOption)
    .option(...byOption)
    .option('--json', 'print as JSON')
    .action(async (options: GenerateOptions) => {
      const { generatePayCalendarForPayroll } = await import('../../directory/calendars/calendar-service.ts');
      await withDatabase(async (db) => {
        const rule = await ruleOf(options);
        if (options.until < options.from) throw new InvalidError('invalid-horizon', '--until must be on or after --from');
        const today = await serviceTodayOfCli();
        const change = await db.transaction().execute((trx) =>
          generatePayCalendarForPayroll(
            trx,
            options.payroll,
            { rule, from: options.from, until: options.until },
            {
              actor: cliActor(operatorName(options.by)),
              reason: options.reason ?? null,
              today,
            },
          ),
        );
        print(options.json, change, calendarChangeText(change));
        warn(change);
      });
    });

  calendars
    .command('import')
    .description("Import a payroll's pay dates from a CSV file (pay_date,payroll_cutoff_date[,pay_period]); any bad row: every one is reported and nothing changes (audited)")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--file <path>', 'the CSV file')
    .option(...reasonOption)
    .option(...byOption)
    .option('--json', 'print as JSON')
    .action(async (options: { payroll: string; file: string; reason?: string; by?: string; json?: boolean }) => {
      const csv = readFileSync(options.file, 'utf8');
      const { importPayCalendarCsv } = await import('../../directory/calendars/calendar-service.ts');
      await withDatabase(async (db) => {
        const today = await serviceTodayOfCli();
        const change = await db
          .transaction()
          .execute((trx) => importPayCalendarCsv(trx, options.payroll, csv, { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null, today }));
        print(options.json, change, calendarChangeText(change));
        warn(change);
      });
    });

  calendars
    .command('sync')
    .description("Fetch a payroll's calendar from its provider's payroll information operation now; it replaces the unlocked pay dates it covers (audited)")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .option(...reasonOption)
    .option(...byOption)
    .option('--json', 'print as JSON')
    .action(async (options: { payroll: string; reason?: string; by?: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { httpAdapterFactory } = await import('../../directory/payroll-providers/http-adapter.ts');
      const { providerUrlPolicy } = await import('../../directory/payroll-providers/provider-url-guard.ts');
      const { resolveWebhookTarget, systemResolver } = await import('../webhooks/webhook-target.ts');
      const { syncPayCalendarFromProvider } = await import('../../directory/calendars/calendar-service.ts');
      const adapterFor = httpAdapterFactory({
        secrets: secretBoxFor(loadConfig()),
        urls: providerUrlPolicy(loadConfig().PROVIDER_ALLOW_PRIVATE_URLS, resolveWebhookTarget, systemResolver),
      });
      await withDatabase(async (db) => {
        const today = await serviceTodayOfCli();
        const change = await db
          .transaction()
          .execute((trx) =>
            syncPayCalendarFromProvider(trx, options.payroll, adapterFor, { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null, today }),
          );
        print(options.json, change, calendarChangeText(change));
        warn(change);
      });
    });
}
