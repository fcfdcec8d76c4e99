import type { Command } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import type { BeneficiaryAccountRow } from '../../settlement/payouts/beneficiary-account-service.ts';
import type { PayoutResource } from '../../settlement/payouts/payout-resource.ts';
import type { PayoutRunSummary } from '../../settlement/payouts/payout-service.ts';
import type { Runtime } from '../../platform/runtime/runtime.ts';
import { operatorName, parseDateOption, parseUuidOption } from './options.ts';

export function formatPayoutRunSummary(summary: PayoutRunSummary): string {
  const lines = [`Payouts for ${summary.payoutDate} (ledger entries with pay dates up to ${summary.settledThrough})`];
  for (const group of summary.groups) {
    const who = `${group.billerClientId} ${group.currency}`;
    switch (group.outcome) {
      case 'paid_out':
        lines.push(`  ${who}: payout ${group.reference} ${formatMoney(group.amount, group.currency)} (${group.entries} items, ${group.paymentsPaidOut} payments paid out)`);
        break;
      case 'carried_over':
        lines.push(`  ${who}: net ${formatMoney(group.net, group.currency)} carried over`);
        break;
      case 'no_beneficiary_account':
        lines.push(`  ${who}: ${formatMoney(group.net, group.currency)} due, skipped: no active beneficiary account`);
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
  if (summary.funding && summary.funding.waiting > 0) {
    lines.push(
      `  ${summary.funding.waiting} payroll pay date(s) wait for their remittance: collections not covered by cash received are held back (deductions remittances list)`,
    );
  }
  for (const [currency, total] of Object.entries(summary.totalsByCurrency)) lines.push(`  Total ${currency} ${formatMoney(total, currency)}`);
  return lines.join('\n');
}

function describePayout(payout: PayoutResource): string {
  const when = payout.status === 'paid' ? ` at ${payout.paid_at}` : payout.status === 'failed' ? ` (${payout.failure_reason})` : '';
  return `Payout ${payout.id} ${payout.reference} ${formatMoney(payout.amount, payout.currency)}: ${payout.status}${when}\n`;
}

/** Runs one operator action in a transaction; a business refusal (unknown payout, not pending) is a message and exit code 1. */
async function settle(action: (runtime: Runtime) => Promise<PayoutResource>): Promise<void> {
  const { loadConfig } = await import('../../platform/config/config.ts');
  const { openRuntime } = await import('../../platform/runtime/runtime.ts');
  const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'payouts');
  try {
    process.stdout.write(describePayout(await action(runtime)));
  } catch (error) {
    (await import('./failures.ts')).reportRefusal(error);
  } finally {
    await runtime.close();
  }
}

export function registerPayoutCommands(program: Command): void {
  const payouts = program.command('payouts').description('Run payouts and record what the bank did with them');

  payouts
    .command('run')
    .description('Pay out settled, funded ledger entries now, per biller and currency (what the daily job does)')
    .option('--date <date>', 'payout date (YYYY-MM-DD); default: today in the service time zone', parseDateOption)
    .option('--by <name>', 'who runs it, kept in the run history (default: the OS user)')
    .action(async (options: { date?: string; by?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { runDailyPayouts } = await import('../../settlement/payouts/daily-payouts.ts');
      const config = loadConfig();
      const runtime = await openRuntime({ ...config, LOG_LEVEL: 'warn' }, 'payouts');
      try {
        // The daily job's run: remittances brought up to date and matched, then funded, then paid.
        const { summary } = await runDailyPayouts({ db: runtime.db, config }, { payoutDate: options.date, trigger: 'cli', triggeredBy: `cli:${operatorName(options.by)}` });
        process.stdout.write(`${formatPayoutRunSummary(summary)}\n`);
        if (summary.groups.some((group) => group.outcome === 'failed')) process.exitCode = 1;
      } finally {
        await runtime.close();
      }
    });

  payouts
    .command('mark-paid')
    .description('The bank made the transfer: pending -> paid (recorded in the audit log with who and why)')
    .requiredOption('--payout <id>', 'payout id', parseUuidOption)
    .option('--reason <text>', 'e.g. the bank statement line that shows the transfer')
    .option('--by <name>', 'who records it (default: the OS user)')
    .action(async (options: { payout: string; reason?: string; by?: string }) => {
      const { markPayoutPaid } = await import('../../settlement/payouts/payout-service.ts');
      const settlement = { actor: cliActor(operatorName(options.by)), reason: options.reason ?? null };
      await settle((runtime) => runtime.db.transaction().execute((trx) => markPayoutPaid(trx, options.payout, settlement)));
    });

  payouts
    .command('mark-failed')
    .description('The bank rejected the transfer: pending -> failed; the next run pays its payments again (recorded in the audit log)')
    .requiredOption('--payout <id>', 'payout id', parseUuidOption)
    .requiredOption('--reason <text>', "the bank's reason")
    .option('--by <name>', 'who records it (default: the OS user)')
    .action(async (options: { payout: string; reason: string; by?: string }) => {
      if (options.reason.trim() === '') {
        process.stderr.write('--reason must not be empty\n');
        process.exitCode = 2;
        return;
      }
      const { markPayoutFailed } = await import('../../settlement/payouts/payout-service.ts');
      const settlement = { actor: cliActor(operatorName(options.by)), reason: options.reason };
      await settle((runtime) => runtime.db.transaction().execute((trx) => markPayoutFailed(trx, options.payout, settlement)));
    });
}

function describeAccount(account: BeneficiaryAccountRow): string {
  const state = account.active ? 'active' : `replaced ${account.deactivated_at?.toISOString() ?? '(before history was kept)'}`;
  return `  ${account.currency} ${account.sort_code} ${account.account_number} ${account.account_holder_name} (${account.id}, added ${account.created_at.toISOString()}, ${state})`;
}

export function registerBeneficiaryAccountCommands(program: Command): void {
  const accounts = program.command('beneficiary-accounts').description("Where billers' payouts are paid: changes keep their history");

  accounts
    .command('set')
    .description("Pay a biller's payouts in a currency to a new account; the old one is kept, deactivated, and the change audited")
    .requiredOption('--biller <id>', 'biller client id', parseUuidOption)
    .requiredOption('--currency <code>', 'ISO 4217 code, e.g. GBP')
    .requiredOption('--account-number <digits>', 'account number')
    .requiredOption('--sort-code <NN-NN-NN>', 'sort code')
    .requiredOption('--holder <name>', 'account holder name')
    .requiredOption('--reason <text>', 'why (kept in the audit log), e.g. the signed change request')
    .option('--by <name>', 'who makes the change (default: the OS user)')
    .option('--json', 'print the new account as JSON (with the one it replaced)')
    .action(async (options: { biller: string; currency: string; accountNumber: string; sortCode: string; holder: string; reason: string; by?: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { toBeneficiaryAccountResource } = await import('../../settlement/payouts/bank-account-resource.ts');
      const { replaceBeneficiaryAccount } = await import('../../settlement/payouts/beneficiary-account-service.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'beneficiary-accounts');
      try {
        const { previous, current } = await runtime.db
          .transaction()
          .execute((trx) =>
            replaceBeneficiaryAccount(
              trx,
              options.biller,
              { currency: options.currency, account_number: options.accountNumber, sort_code: options.sortCode, account_holder_name: options.holder },
              { actor: cliActor(operatorName(options.by)), reason: options.reason },
            ),
          );
        if (options.json) {
          const replaced = previous ? toBeneficiaryAccountResource(previous) : null;
          process.stdout.write(`${JSON.stringify({ ...toBeneficiaryAccountResource(current), replaced }, null, 2)}\n`);
          return;
        }
        process.stdout.write(`Biller ${options.biller} ${current.currency} payouts now go to\n${describeAccount(current)}\n`);
        if (previous) process.stdout.write(`instead of\n${describeAccount(previous)}\n`);
      } catch (error) {
        (await import('./failures.ts')).reportRefusal(error);
      } finally {
        await runtime.close();
      }
    });

  accounts
    .command('list')
    .description("A biller's accounts, the active one and every one it replaced")
    .requiredOption('--biller <id>', 'biller client id', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { biller: string; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { toBeneficiaryAccountResource } = await import('../../settlement/payouts/bank-account-resource.ts');
      const { listBeneficiaryAccounts } = await import('../../settlement/payouts/beneficiary-account-repository.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'beneficiary-accounts');
      try {
        const rows = await listBeneficiaryAccounts(runtime.db, options.biller);
        if (options.json) process.stdout.write(`${JSON.stringify({ beneficiary_accounts: rows.map(toBeneficiaryAccountResource) }, null, 2)}\n`);
        else process.stdout.write(rows.length === 0 ? `No beneficiary accounts for ${options.biller}\n` : `${rows.map(describeAccount).join('\n')}\n`);
      } finally {
        await runtime.close();
      }
    });
}
