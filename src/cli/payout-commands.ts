import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { serviceToday } from '../calendars/lock-date.ts';
import { HttpProblem } from '../http/problem.ts';
import { formatMinorUnits } from '../money/major-units.ts';
import type { PayoutResource } from '../payouts/payout-resource.ts';
import { markPayoutFailed, markPayoutPaid, runPayoutsOn, type PayoutRunSummary } from '../payouts/payout-service.ts';
import { openRuntime, type Runtime } from '../runtime/runtime.ts';
import { parseDateOption, parseUuidOption } from './options.ts';

export function formatPayoutRunSummary(summary: PayoutRunSummary): string {
  const lines = [`Payouts for ${summary.payoutDate} (ledger entries with pay dates up to ${summary.settledThrough})`];
  for (const group of summary.groups) {
    const who = `${group.billerClientId} ${group.currency}`;
    switch (group.outcome) {
      case 'paid_out':
        lines.push(`  ${who}: payout ${group.reference} ${formatMinorUnits(group.amount, group.currency)} (${group.entries} items, ${group.paymentsPaidOut} payments paid out)`);
        break;
      case 'carried_over':
        lines.push(`  ${who}: net ${formatMinorUnits(group.net, group.currency)} carried over`);
        break;
      case 'no_beneficiary_account':
        lines.push(`  ${who}: ${formatMinorUnits(group.net, group.currency)} due, skipped: no active beneficiary account`);
        break;
      case 'already_paid_out_today':
        lines.push(`  ${who}: already paid out today (${group.reference})`);
        break;
      case 'failed':
        lines.push(`  ! ${who}: ${group.error}`);
        break;
    }
  }
  if (summary.groups.length === 0) lines.push('  nothing to pay out');
  for (const [currency, total] of Object.entries(summary.totalsByCurrency)) lines.push(`  Total ${currency} ${formatMinorUnits(total, currency)}`);
  return lines.join('\n');
}

function describePayout(payout: PayoutResource): string {
  const when = payout.status === 'paid' ? ` at ${payout.paid_at}` : payout.status === 'failed' ? ` (${payout.failure_reason})` : '';
  return `Payout ${payout.id} ${payout.reference} ${formatMinorUnits(payout.amount, payout.currency)} ${payout.currency}: ${payout.status}${when}\n`;
}

/** Runs one operator action in a transaction; a business refusal (404, 409) is a message and exit code 1. */
async function settle(action: (runtime: Runtime) => Promise<PayoutResource>): Promise<void> {
  const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'payouts');
  try {
    process.stdout.write(describePayout(await action(runtime)));
  } catch (error) {
    if (!(error instanceof HttpProblem)) throw error;
    process.stderr.write(`${error.detail ?? error.title}\n`);
    process.exitCode = 1;
  } finally {
    await runtime.close();
  }
}

export function registerPayoutCommands(program: Command): void {
  const payouts = program.command('payouts').description('Run payouts and record what the bank did with them');

  payouts
    .command('run')
    .description('Pay out settled ledger entries now, per biller and currency (what the daily job does)')
    .option('--date <date>', 'payout date (YYYY-MM-DD); default: today in the service time zone', parseDateOption)
    .action(async (options: { date?: string }) => {
      const config = loadConfig();
      const runtime = await openRuntime({ ...config, LOG_LEVEL: 'warn' }, 'payouts');
      try {
        const summary = await runPayoutsOn(runtime.db, {
          today: options.date ?? serviceToday(new Date(), config.SERVICE_TIME_ZONE),
          settlementDelayWorkingDays: config.SETTLEMENT_DELAY_WORKING_DAYS,
        });
        process.stdout.write(`${formatPayoutRunSummary(summary)}\n`);
        if (summary.groups.some((group) => group.outcome === 'failed')) process.exitCode = 1;
      } finally {
        await runtime.close();
      }
    });

  payouts
    .command('mark-paid')
    .description('The bank made the transfer: pending -> paid')
    .requiredOption('--payout <id>', 'payout id', parseUuidOption)
    .action(async (options: { payout: string }) => {
      await settle((runtime) => runtime.db.transaction().execute((trx) => markPayoutPaid(trx, options.payout)));
    });

  payouts
    .command('mark-failed')
    .description('The bank rejected the transfer: pending -> failed; the next run pays its payments again')
    .requiredOption('--payout <id>', 'payout id', parseUuidOption)
    .requiredOption('--reason <text>', "the bank's reason")
    .action(async (options: { payout: string; reason: string }) => {
      if (options.reason.trim() === '') {
        process.stderr.write('--reason must not be empty\n');
        process.exitCode = 2;
        return;
      }
      await settle((runtime) => runtime.db.transaction().execute((trx) => markPayoutFailed(trx, options.payout, options.reason)));
    });
}
