import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import type { Database, Executor } from '../db/connection.ts';
import { PAYOUT_BANK_FILE_FORMATS, payoutBankFileIn, type PayoutBankFileFormat } from '../payouts/payout-service.ts';
import { writeReconciliationCsv, writeReconciliationSummaryCsv } from '../reports/reconciliation-report.ts';
import { writeThreeWayCsv } from '../reports/three-way-report.ts';
import { openRuntime } from '../runtime/runtime.ts';
import { parseDateOption, parseUuidOption } from './options.ts';

/**
 * The bank payment file of the payouts made on `date` (the CSV, or with format `pain.001` the ISO 20022
 * credit transfer initiation), to `out` or stdout. Returns how many payouts it holds.
 */
export async function exportPayouts(
  db: Executor,
  options: { date: string; out?: string | undefined; format?: PayoutBankFileFormat | undefined },
): Promise<number> {
  const file = await payoutBankFileIn(db, options.date, options.format ?? 'csv');
  if (options.out) await writeFile(options.out, file.content, 'utf8');
  else process.stdout.write(file.content);
  return file.payouts;
}

/**
 * The reconciliation CSV (or, with `summary`, its per-payroll summary) of a pay date, streamed to `out`
 * or stdout: the same bytes as GET /reports/reconciliation answers an operator.
 */
export async function exportReconciliation(
  db: Database,
  options: { payDate: string; payrollId?: string | undefined; summary?: boolean | undefined; out?: string | undefined },
): Promise<void> {
  const filter = { payDate: options.payDate, payrollId: options.payrollId };
  const destination = options.out ? createWriteStream(options.out) : process.stdout;
  const end = options.out !== undefined;
  if (options.summary) await writeReconciliationSummaryCsv(db, filter, destination, { end });
  else await writeReconciliationCsv(db, filter, destination, { end });
}

/** The three-way reconciliation CSV of a pay date to `out` or stdout: the same bytes as GET /reports/three-way. */
export async function exportThreeWay(db: Executor, options: { payDate: string; out?: string | undefined }): Promise<void> {
  const destination = options.out ? createWriteStream(options.out) : process.stdout;
  await writeThreeWayCsv(db, options.payDate, destination, { end: options.out !== undefined });
}

export function registerExportCommands(program: Command): void {
  const exportCommand =
    program.commands.find((c) => c.name() === 'export') ?? program.command('export').description('Write CSV and bank files');

  exportCommand
    .command('payouts')
    .description('Write the bank payment file (CSV, or ISO 20022 pain.001.001.09 XML) of the payouts made on a date')
    .requiredOption('--date <date>', 'payout date (YYYY-MM-DD)', parseDateOption)
    .addOption(
      new Option('--format <format>', 'csv, or pain.001 for the credit transfer initiation the bank imports').choices(PAYOUT_BANK_FILE_FORMATS).default('csv'),
    )
    .option('--out <file>', 'output file (default: stdout)')
    .action(async (options: { date: string; format: PayoutBankFileFormat; out?: string }) => {
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'export');
      try {
        const count = await exportPayouts(runtime.db, options);
        if (options.out) process.stderr.write(`Wrote ${count} payout(s) made on ${options.date} to ${options.out}\n`);
      } finally {
        await runtime.close();
      }
    });

  exportCommand
    .command('reconciliation')
    .description("Write a pay date's reconciliation CSV (one row per payment request per attempt), or with --summary its per-payroll totals")
    .requiredOption('--pay-date <date>', 'pay date (YYYY-MM-DD)', parseDateOption)
    .option('--payroll <id>', 'only this payroll', parseUuidOption)
    .option('--summary', 'write the per-payroll summary (requested, deducted, collected, shortfall, exceptions) instead')
    .option('--out <file>', 'output file (default: stdout)')
    .action(async (options: { payDate: string; payroll?: string; summary?: boolean; out?: string }) => {
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'export');
      try {
        await exportReconciliation(runtime.db, {
          payDate: options.payDate,
          payrollId: options.payroll,
          summary: options.summary,
          out: options.out,
        });
        if (options.out) process.stderr.write(`Wrote ${options.summary ? 'reconciliation summary' : 'reconciliation'} for ${options.payDate} to ${options.out}\n`);
      } finally {
        await runtime.close();
      }
    });

  exportCommand
    .command('three-way')
    .description("Write a pay date's three-way reconciliation CSV: per payroll, requested vs deducted vs received vs paid out, with the differences explained")
    .requiredOption('--pay-date <date>', 'pay date (YYYY-MM-DD)', parseDateOption)
    .option('--out <file>', 'output file (default: stdout)')
    .action(async (options: { payDate: string; out?: string }) => {
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'export');
      try {
        await exportThreeWay(runtime.db, { payDate: options.payDate, out: options.out });
        if (options.out) process.stderr.write(`Wrote the three-way reconciliation for ${options.payDate} to ${options.out}\n`);
      } finally {
        await runtime.close();
      }
    });
}
