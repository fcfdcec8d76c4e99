import { serviceToday } from '../../directory/calendars/lock-date.ts';
import type { Config } from '../../platform/config/config.ts';
import type { Database } from '../../platform/db/connection.ts';
import type { PayoutRunTrigger } from '../../platform/db/tables.ts';
import { matchingPolicyOf } from '../cash/cash-service.ts';
import { runMatching, type MatchingOutcome } from '../cash/matching-service.ts';
import { runPayoutsOn, type PayoutRunSummary } from './payout-service.ts';

/** The settings the daily payout run reads: the service's day, settlement, funding, and remittance matching. */
export type DailyPayoutSettings = Pick<
  Config,
  'SERVICE_TIME_ZONE' | 'SETTLEMENT_DELAY_WORKING_DAYS' | 'PAYOUT_FUNDING' | 'PAYOUT_CONCURRENCY' | 'REMITTANCE_LATE_WORKING_DAYS' | 'REMITTANCE_TOLERANCE_MINOR'
>;

export interface DailyPayoutRun {
  /** The remittance matching run first. */
  matching: MatchingOutcome;
  /** Then the payouts; `payoutDate` is the day run. */
  summary: PayoutRunSummary;
}

/**
 * The daily payout run, as the run-payouts job and `deductions payouts run` both make it: remittances
 * first (late ones marked, and their billers told; credits matched again), so the payouts fund from
 * every remittance as it stands this morning; then each biller's settled, funded entries paid out per
 * currency. The payout date is today in the service time zone unless given. A group that failed is in
 * the summary (the others went ahead); a repeat on the same day finds the paid groups done.
 */
export async function runDailyPayouts(
  deps: { db: Database; config: DailyPayoutSettings },
  run: { payoutDate?: string | undefined; trigger: PayoutRunTrigger; triggeredBy: string | null; now?: Date },
): Promise<DailyPayoutRun> {
  const { db, config } = deps;
  const today = run.payoutDate ?? serviceToday(run.now ?? new Date(), config.SERVICE_TIME_ZONE);
  const matching = await runMatching(db, await matchingPolicyOf(db, config, today));
  const summary = await runPayoutsOn(db, {
    today,
    settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS,
    funding: config.PAYOUT_FUNDING,
    concurrency: config.PAYOUT_CONCURRENCY,
    trigger: run.trigger,
    triggeredBy: run.triggeredBy,
  });
  return { matching, summary };
}
