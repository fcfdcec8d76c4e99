import type { Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Database } from '../src/platform/db/connection.ts';
import { runPayoutsJob } from '../src/platform/queue/job-catalogue.ts';
import { payloadOf } from '../src/platform/queue/job-contract.ts';
import { runDailyPayouts, type DailyPayoutSettings } from '../src/settlement/payouts/daily-payouts.ts';

/**
 * The daily payout run for today (or `date`). A group that failed makes the job fail, so BullMQ retries
 * it; the groups already paid out are no-ops on the retry.
 */
export function runPayoutsProcessor(db: Database, config: DailyPayoutSettings, logger: Logger) {
  return async (job: Job) => {
    const { date } = payloadOf(job, runPayoutsJob);
    const { matching, summary } = await runDailyPayouts({ db, config }, { payoutDate: date, trigger: 'schedule', triggeredBy: job.id ?? null });
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
