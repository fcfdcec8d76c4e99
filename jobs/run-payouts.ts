import type { Job } from 'bullmq';
import { matchingPolicyOf } from '../src/settlement/cash/cash-service.ts';
import { runMatching } from '../src/settlement/cash/matching-service.ts';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { Config } from '../src/platform/config/config.ts';
import type { Database } from '../src/platform/db/connection.ts';
import { serviceToday } from '../src/directory/calendars/lock-date.ts';
import { runPayoutsOn } from '../src/settlement/payouts/payout-service.ts';
import { isoDateSchema } from '../src/platform/shared/schemas.ts';

const payloadSchema = z.object({ date: isoDateSchema.optional() });

/**
 * The daily payout run for today (or `date`). A group that failed makes the job fail, so BullMQ retries
 * it; the groups already paid out are no-ops on the retry.
 */
export function runPayoutsProcessor(db: Database, config: Pick<Config, 'SERVICE_TIME_ZONE' | 'SETTLEMENT_DELAY_WORKING_DAYS' | 'PAYOUT_FUNDING' | 'PAYOUT_CONCURRENCY' | 'REMITTANCE_LATE_WORKING_DAYS' | 'REMITTANCE_TOLERANCE_MINOR'>, logger: Logger) {
  return async (job: Job) => {
    const { date } = payloadSchema.parse(job.data ?? {});
    const today = date ?? serviceToday(new Date(), config.SERVICE_TIME_ZONE);
    // Remittances first: late ones are marked (and their billers told), credits matched again, so the
    // payouts fund from every remittance as it stands this morning.
    const matching = await runMatching(db, await matchingPolicyOf(db, config, today));
    const summary = await runPayoutsOn(db, { today, settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS, funding: config.PAYOUT_FUNDING, concurrency: config.PAYOUT_CONCURRENCY, trigger: 'schedule', triggeredBy: job.id ?? null });
    const count = (outcome: string) => summary.groups.filter((group) => group.outcome === outcome).length;
    for (const group of summary.groups) {
      if (group.outcome === 'no_beneficiary_account') {
        logger.warn({ biller: group.billerClientId, currency: group.currency, net: group.net }, 'payout skipped: no active beneficiary account');
      }
    }
    const failures = summary.groups.flatMap((group) => (group.outcome === 'failed' ? [group] : []));
    if (failures.length > 0) {
      throw new Error(`payouts failed for ${failures.map((f) => `${f.billerClientId}/${f.currency}: ${f.error}`).join('; ')}`);
    }
    return {
      payoutDate: summary.payoutDate,
      settledThrough: summary.settledThrough,
      payouts: count('paid_out'),
      carriedOver: count('carried_over'),
      noBeneficiaryAccount: count('no_beneficiary_account'),
      alreadyPaidOutToday: count('already_paid_out_today'),
      totalsByCurrency: summary.totalsByCurrency,
      remittanceMatches: matching.matches,
      creditsToMatch: matching.unmatchedCredits,
      funding: summary.funding,
    };
  };
}
