import { type Actor, recordAction } from '../../platform/audit/audit-service.ts';
import type { Executor } from '../../platform/db/connection.ts';
import type { AdapterFactory } from '../payroll-providers/adapter.ts';
import { ConflictError, InvalidError, NotFoundError, UpstreamError } from '../../platform/shared/domain-errors.ts';
import { isoInstant, isUuid } from '../../platform/shared/schemas.ts';
import { loadHolidays } from './bank-holiday-repository.ts';
import { PayDatesCollide, payDatesFromRule, type PayCalendarHorizon } from './calendar-generation.ts';
import {
  findPayDatesInUse,
  findPayrollCalendarSettings,
  findPayrollProviderConnection,
  listPayDates,
  listPayDatesForUpdate,
  markCalendarSynced,
  replaceUnlockedPayDates,
  setGoLiveDateIfUnset,
  updateGoLiveDate,
  upsertPayDates,
} from './calendar-repository.ts';
import { type CalendarRefusal, planCalendarReplacement } from './calendar-replacement.ts';
import { invalidInput } from '../../platform/shared/invalid-input.ts';
import { calendarGoLiveWarnings, collectsPayDate, defaultGoLiveDate, type GoLivePayDate } from './go-live.ts';
import { lockDate } from './lock-date.ts';
import { parsePayCalendarCsv } from './pay-calendar-csv.ts';
import { goLiveRequestSchema, type PayCalendarChange, type PayCalendarRule, type PayDateResource, type PayrollGoLive, type PayrollPayDates } from './pay-calendar-resource.ts';

export interface ProviderPayDate {
  pay_date: string;
  payroll_cutoff_date: string;
  pay_period: string;
}

export interface PayCalendarEdit {
  actor: Actor;
  reason: string | null;
  /** Today in the service time zone: which lock dates have passed, for the go-live date and the warnings. */
  today: string;
}

type PayrollCalendarSettings = NonNullable<Awaited<ReturnType<typeof findPayrollCalendarSettings>>>;

async function settingsOf(db: Executor, payrollId: string): Promise<PayrollCalendarSettings> {
  const settings = isUuid(payrollId) ? await findPayrollCalendarSettings(db, payrollId) : undefined;
  if (!settings) throw new NotFoundError(`Payroll ${payrollId}`);
  return settings;
}

type StoredRow = Awaited<ReturnType<typeof listPayDates>>[number];

const asCalendarPayDate = (row: StoredRow): GoLivePayDate => ({ pay_date: row.pay_date, lock_date: row.lock_date, locked: row.locked_at !== null });

/**
 * The payroll's go-live date once a calendar has been written: the one it had, or, for its first
 * calendar, its first pay date whose lock date is still ahead (none yet: still not live).
 */
async function goLiveDateAfterCalendarWrite(trx: Executor, settings: PayrollCalendarSettings, stored: readonly StoredRow[], today: string): Promise<string | null> {
  if (settings.go_live_date !== null) return settings.go_live_date;
  const first = defaultGoLiveDate(stored.map(asCalendarPayDate), today);
  return first === null ? null : setGoLiveDateIfUnset(trx, settings.payroll_id, first);
}

/**
 * Stores a provider's calendar with each pay date's lock date computed from its lead time and the
 * bank holidays of the payroll's region (the nightly sync and the provider directory). A payroll's
 * first calendar gives it its go-live date.
 */
export async function savePayCalendar(db: Executor, payrollId: string, payDates: readonly ProviderPayDate[], today: string): Promise<void> {
  const settings = await findPayrollCalendarSettings(db, payrollId);
  if (!settings) throw new Error(`payroll ${payrollId} does not exist`);
  const holidays = await loadHolidays(db, settings.bank_holiday_region);
  await upsertPayDates(
    db,
    payrollId,
    payDates.map((d) => ({ ...d, lock_date: lockDate(d.payroll_cutoff_date, settings.lead_time_working_days, holidays) })),
  );
  if (settings.go_live_date === null) await goLiveDateAfterCalendarWrite(db, settings, await listPayDates(db, payrollId), today);
}

function toPayDateResource(row: StoredRow): PayDateResource {
  return {
    pay_date: row.pay_date,
    payroll_cutoff_date: row.payroll_cutoff_date,
    pay_period: row.pay_period,
    lock_date: row.lock_date,
    locked: row.locked_at !== null,
    locked_at: row.locked_at === null ? null : isoInstant(row.locked_at),
    first_locked_at: row.first_locked_at === null ? null : isoInstant(row.first_locked_at),
  };
}

/**
 * Sets a payroll's go-live date: its pay dates before it are never locked or caught up, and from it
 * on the nightly run locks them. Moving it earlier than lock dates already past has the next nightly
 * run lock those at once: the answer warns of it. Audited.
 */
export async function setGoLiveDate(trx: Executor, payrollId: string, input: unknown, edit: PayCalendarEdit): Promise<PayrollGoLive> {
  const parsed = goLiveRequestSchema.safeParse(input);
  if (!parsed.success) throw invalidInput(parsed.error);
  const settings = await settingsOf(trx, payrollId);
  const { go_live_date: goLiveDate, reason } = parsed.data;
  await updateGoLiveDate(trx, settings.payroll_id, goLiveDate);
  const payDates = (await listPayDates(trx, settings.payroll_id)).map(asCalendarPayDate);
  const result: PayrollGoLive = {
    payroll_id: settings.payroll_id,
    go_live_date: goLiveDate,
    previous_go_live_date: settings.go_live_date,
    first_pay_date_collected: payDates.find((d) => !d.locked && collectsPayDate(goLiveDate, d.pay_date))?.pay_date ?? null,
    warnings: calendarGoLiveWarnings(payDates, goLiveDate, edit.today),
  };
  await recordAction(trx, {
    actor: edit.actor,
    action: 'payroll.go_live_set',
    resourceType: 'payroll',
    resourceId: settings.payroll_id,
    reason: reason ?? edit.reason,
    before: { go_live_date: settings.go_live_date },
    after: { go_live_date: goLiveDate },
  });
  return result;
}

/** A payroll's calendar as operators see it: every pay date with its lock date and whether it is locked. */
export async function showPayDates(db: Executor, payrollId: string): Promise<PayrollPayDates> {
  const settings = await settingsOf(db, payrollId);
  const rows = await listPayDates(db, payrollId);
  return { payroll_id: settings.payroll_id, bank_holiday_region: settings.bank_holiday_region, pay_dates: rows.map(toPayDateResource), go_live_date: settings.go_live_date };
}

function describeRefusal(refusal: CalendarRefusal): string {
  switch (refusal.code) {
    case 'locked-pay-date-removed':
      return `pay date ${refusal.payDate} is locked and the new calendar does not have it`;
    case 'locked-pay-date-altered':
      return `pay date ${refusal.payDate} is locked and the new calendar changes its ${refusal.field}`;
    case 'locked-pay-date-moved':
      return `pay date ${refusal.payDate} is locked and the new calendar moves its pay period ${refusal.payPeriod} to ${refusal.movedTo}`;
    case 'pay-period-taken':
      return `pay period ${refusal.payPeriod} of ${refusal.payDate} is already the pay period of ${refusal.takenBy}, outside the new calendar's range`;
    case 'duplicate-pay-date':
      return `pay date ${refusal.payDate} is in the new calendar twice`;
    case 'duplicate-pay-period':
      return `pay period ${refusal.payPeriod} is in the new calendar twice (again on ${refusal.payDate})`;
  }
}

const auditActionOf = { rule: 'pay_calendar.generated', csv: 'pay_calendar.imported', provider: 'pay_calendar.synced' } as const;

/**
 * A new calendar for a payroll replaces its unlocked pay dates within `range` (see
 * planCalendarReplacement), with lock dates from the provider's lead time and the payroll region's
 * bank holidays. Refused whole (409, naming the dates) when it would touch a locked pay date, or
 * remove an unlocked one that payment requests target or the cycle already refers to. Audited.
 */
async function replacePayCalendar(
  trx: Executor,
  settings: PayrollCalendarSettings,
  calendar: { source: PayCalendarChange['source']; payDates: readonly ProviderPayDate[]; range: PayCalendarHorizon; detail: unknown },
  edit: PayCalendarEdit,
): Promise<PayCalendarChange> {
  const payrollId = settings.payroll_id;
  const holidays = await loadHolidays(trx, settings.bank_holiday_region);
  const stored = await listPayDatesForUpdate(trx, payrollId);
  const incoming = calendar.payDates.map((d) => ({ ...d, lock_date: lockDate(d.payroll_cutoff_date, settings.lead_time_working_days, holidays) }));
  const result = planCalendarReplacement({
    stored: stored.map((row) => ({ ...row, locked: row.locked_at !== null })),
    incoming,
    range: calendar.range,
  });
  if (!result.ok) {
    const lockedDates = [...new Set(result.refusals.filter((r) => r.code.startsWith('locked-')).map((r) => r.payDate))];
    const code = lockedDates.length > 0 ? 'locked-pay-date' : result.refusals[0]!.code.startsWith('duplicate-') ? 'calendar-repeats-itself' : 'pay-period-taken';
    const detail = `The calendar was not changed: ${result.refusals.map(describeRefusal).join('; ')}`;
    const members = { pay_dates: [...new Set(result.refusals.map((r) => r.payDate))].sort() };
    if (code === 'calendar-repeats-itself') throw new InvalidError(code, detail, { members });
    throw new ConflictError(code, detail, { members });
  }
  const { plan } = result;

  const inUse = await findPayDatesInUse(trx, payrollId, plan.remove);
  if (inUse.length > 0) {
    const reasons = inUse.map((use) =>
      use.payment_requests > 0
        ? `pay date ${use.pay_date} is the target of ${use.payment_requests} payment request${use.payment_requests === 1 ? '' : 's'}`
        : `pay date ${use.pay_date} already has deduction data, instructions or records`,
    );
    throw new ConflictError('pay-date-in-use', `The calendar was not changed: it removes pay dates still in use: ${reasons.join('; ')}`, {
      members: { pay_dates: inUse.map((use) => use.pay_date) },
    });
  }

  await replaceUnlockedPayDates(trx, payrollId, plan);
  const all = await listPayDates(trx, payrollId);
  const goLiveDate = await goLiveDateAfterCalendarWrite(trx, settings, all, edit.today);
  const inRange = all.filter((row) => row.pay_date >= calendar.range.from && row.pay_date <= calendar.range.until);
  const now = inRange.map(toPayDateResource);
  const change: PayCalendarChange = {
    payroll_id: payrollId,
    source: calendar.source,
    from: calendar.range.from,
    until: calendar.range.until,
    added: plan.add.map((d) => d.pay_date),
    changed: plan.change.map((d) => d.pay_date),
    removed: plan.remove,
    unchanged: plan.unchanged,
    pay_dates: now,
    go_live_date: goLiveDate,
    warnings: calendarGoLiveWarnings(inRange.map(asCalendarPayDate), goLiveDate, edit.today),
  };
  await recordAction(trx, {
    actor: edit.actor,
    action: auditActionOf[calendar.source],
    resourceType: 'payroll',
    resourceId: payrollId,
    reason: edit.reason,
    before: stored
      .filter((row) => plan.remove.includes(row.pay_date) || plan.change.some((d) => d.pay_date === row.pay_date))
      .map((row) => ({ pay_date: row.pay_date, payroll_cutoff_date: row.payroll_cutoff_date, pay_period: row.pay_period, lock_date: row.lock_date })),
    after: {
      source: calendar.detail,
      from: change.from,
      until: change.until,
      added: plan.add,
      changed: plan.change,
      removed: plan.remove,
      ...(goLiveDate !== settings.go_live_date ? { go_live_date: goLiveDate } : {}),
    },
  });
  return change;
}

/** The pay dates a rule gives over a horizon become the payroll's calendar there. */
export async function generatePayCalendarForPayroll(
  trx: Executor,
  payrollId: string,
  request: { rule: PayCalendarRule; from: string; until: string },
  edit: PayCalendarEdit,
): Promise<PayCalendarChange> {
  const settings = await settingsOf(trx, payrollId);
  const frequency = settings.payment_run_frequency;
  if (frequency !== 'unknown' && frequency !== request.rule.frequency) {
    throw new InvalidError('frequency-mismatch', `Payroll ${payrollId} is paid ${frequency}; the rule is ${request.rule.frequency}`, {
      errors: [{ pointer: '/rule/frequency', detail: `must be ${frequency}, the payroll's frequency` }],
    });
  }
  const holidays = await loadHolidays(trx, settings.bank_holiday_region);
  let payDates;
  try {
    payDates = payDatesFromRule(request.rule, { from: request.from, until: request.until }, holidays);
  } catch (error) {
    if (!(error instanceof PayDatesCollide)) throw error;
    throw new InvalidError('pay-dates-collide', error.message, { errors: [{ pointer: '/rule', detail: error.message }] });
  }
  return replacePayCalendar(trx, settings, { source: 'rule', payDates, range: { from: request.from, until: request.until }, detail: { rule: request.rule } }, edit);
}

/** The range a listed calendar speaks for: from its first pay date to its last. */
function rangeOf(payDates: readonly ProviderPayDate[]): PayCalendarHorizon {
  const dates = payDates.map((d) => d.pay_date).sort();
  return { from: dates[0]!, until: dates[dates.length - 1]! };
}

/**
 * A calendar sent as CSV (pay_date,payroll_cutoff_date[,pay_period]) replaces the payroll's
 * calendar from its first pay date to its last. A file with any bad row changes nothing: every
 * fault is reported with its line, column and reason.
 */
export async function importPayCalendarCsv(trx: Executor, payrollId: string, csv: string, edit: PayCalendarEdit): Promise<PayCalendarChange> {
  const settings = await settingsOf(trx, payrollId);
  const parsed = parsePayCalendarCsv(csv, settings.payment_run_frequency);
  if (!parsed.ok) {
    // Every fault in the one sentence too: the CLI shows a refusal as one line.
    const faults = parsed.errors.map((e) => `line ${e.line}${e.column ? ` ${e.column}` : ''}: ${e.reason}`).join('; ');
    const count = `${parsed.errors.length} error${parsed.errors.length === 1 ? '' : 's'}`;
    throw new InvalidError('invalid-pay-calendar-file', `The file has ${count}, so nothing was imported: ${faults}`, {
      errors: parsed.errors.map((e) => ({ pointer: `/lines/${e.line}${e.column ? `/${e.column}` : ''}`, detail: e.reason })),
      members: { row_errors: parsed.errors },
    });
  }
  return replacePayCalendar(trx, settings, { source: 'csv', payDates: parsed.payDates, range: rangeOf(parsed.payDates), detail: { rows: parsed.payDates.length } }, edit);
}

/**
 * The calendar the payroll's provider publishes (its payroll information operation) replaces ours
 * from its first pay date to its last. Unlike the nightly sync, which keeps what it cannot apply,
 * an operator asking for it hears why it was refused.
 */
export async function syncPayCalendarFromProvider(trx: Executor, payrollId: string, adapterFor: AdapterFactory, edit: PayCalendarEdit): Promise<PayCalendarChange> {
  const settings = await settingsOf(trx, payrollId);
  const connection = await findPayrollProviderConnection(trx, payrollId);
  const adapter = connection ? adapterFor(connection) : null;
  if (!adapter) throw new ConflictError('provider-without-api', `The provider of payroll ${payrollId} has no API to sync a calendar from`);
  const information = await adapter.payrollInformation(payrollId);
  const payDates = information.payroll.pay_dates.map((d) => ({
    pay_date: d.pay_date,
    payroll_cutoff_date: d.payroll_cutoff_date,
    pay_period: d.pay_period,
  }));
  if (payDates.length === 0) throw new UpstreamError('provider-calendar-empty', `The provider of payroll ${payrollId} lists no pay dates`);
  const change = await replacePayCalendar(
    trx,
    settings,
    { source: 'provider', payDates, range: rangeOf(payDates), detail: { provider_id: connection!.id, pay_dates: payDates.length } },
    edit,
  );
  await markCalendarSynced(trx, payrollId);
  return change;
}
