import { nextWorkingDayOnOrAfter, previousWorkingDayOnOrBefore, subtractWorkingDays, type HolidayCalendar } from '../../directory/calendars/working-days.ts';

// The two dates of a payout that follow the banks' calendar (the England and Wales bank holidays and
// weekends, see loadClearingHolidays): which pay dates it may pay, and the day the bank is asked to
// make the transfer. Pure rules; test/settlement/payouts/payout-calendar.test.ts holds them to every day of
// several years.

/**
 * Pay dates on or before the returned date are settled on `today`: at least `settlementDelayWorkingDays`
 * bank business days have passed since them. The count starts from the last business day on or before
 * `today`, since a day the banks are shut moves no money: a Saturday or a bank holiday counts as the
 * business day before it. So with a delay of 1, a run on Saturday settles Thursday's pay date, not
 * Friday's (which has had no business day yet), exactly as a run on Friday does; Monday's run settles
 * Friday's. With a delay of 0, the last business day on or before `today` itself.
 *
 * The cutoff is always a business day, never after `today`, and between it (excluded) and `today`
 * (included) there are exactly `settlementDelayWorkingDays` business days.
 */
export function settlementCutoff(today: string, settlementDelayWorkingDays: number, holidays: HolidayCalendar): string {
  return subtractWorkingDays(previousWorkingDayOnOrBefore(today, holidays), settlementDelayWorkingDays, holidays);
}

/**
 * The day a payment file asks the bank to make its payouts (pain.001 ReqdExctnDt): the payout date
 * when it is a bank business day, otherwise the next business day (a Saturday's payouts go on Monday,
 * Good Friday's on the Tuesday after Easter Monday). A file written after its payout date asks for
 * the first business day on or after the day it is written: banks refuse an execution date in the past.
 */
export function payoutExecutionDate(payoutDate: string, writtenOn: string, holidays: HolidayCalendar): string {
  return nextWorkingDayOnOrAfter(writtenOn > payoutDate ? writtenOn : payoutDate, holidays);
}
