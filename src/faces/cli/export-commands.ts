import { Option, type Command } from 'commander';
import type { Database, Executor } from '../../platform/db/connection.ts';
import { cliActor, type Actor } from '../../platform/audit/audit-service.ts';
import { formatMoney } from '../../platform/money/money-text.ts';
import type { PaymentFileSummaryRow } from '../../settlement/payouts/payment-file-repository.ts';
import type { PaymentFileDownload } from '../../settlement/payouts/payment-file-service.ts';
import type { PaymentFileFormat } from '../../settlement/payouts/payout-file.ts';
import type { Runtime } from '../../platform/runtime/runtime.ts';
import { operatorName, parseDateOption, parseUuidOption, parseWholeNumber } from './options.ts';
import { privateFileStream, writePrivateFile } from './private-file.ts';
import { PAYMENT_FILE_FORMATS } from './vocabulary.ts';

export interface ExportPayoutsOptions {
  date: string;
  out?: string | undefined;
  format?: PaymentFileFormat | undefined;
  /** A file of the date by its number: written again as stored, nothing new is written. */
  file?: number | undefined;
  /** Who writes a new file (default: the OS user). */
  actor?: Actor | undefined;
}

/** What exportPayouts wrote: the file, and the files it wrote into the database first (none with `file`). */
export interface ExportedPayouts {
  download: PaymentFileDownload;
  written: PaymentFileSummaryRow[];
}

/**
 * A payment file of the payouts made on `date` (the CSV rendering, or with format `pain.001` the ISO
 * 20022 credit transfer initiation), to `out` or stdout, as stored. Without `file`, as GET
 * /payouts/bank-file: the date's payouts that no file holds yet are first written into a new file, and
 * the date's latest file is exported (the same bytes as its every other download). With `file`, that
 * file of the date, and nothing is written.
 */
export async function exportPayouts(db: Database, options: ExportPayoutsOptions): Promise<ExportedPayouts> {
  const { latestPaymentFileOf, paymentFileOfDateDownload } = await import('../../settlement/payouts/payment-file-service.ts');
  const format = options.format ?? 'csv';
  const exported: ExportedPayouts =
    options.file === undefined
      ? await latestPaymentFileOf(db, options.date, format, { actor: options.actor ?? cliActor(operatorName(undefined)) }).then(({ written, ...download }) => ({
          download,
          written,
        }))
      : { download: await paymentFileOfDateDownload(db, options.date, options.file, format), written: [] };
  // Account numbers and names of every beneficiary: the owner's eyes only (0600).
  if (options.out) await writePrivateFile(options.out, exported.download.content);
  else process.stdout.write(exported.download.content);
  return exported;
}

/** A runtime for one export, its logging held to warnings. */
async function openExportRuntime(): Promise<Runtime> {
  const { loadConfig } = await import('../../platform/config/config.ts');
  const { openRuntime } = await import('../../platform/runtime/runtime.ts');
  return openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'export');
}

/** One line per file of a date: its number, MsgId, execution date, transfers and totals, who wrote it and when. */
export function describePaymentFiles(files: readonly PaymentFileSummaryRow[]): string {
  return files
    .map((file) => {
      const transfers = file.totals.reduce((sum, total) => sum + total.transfers, 0);
      const totals = file.totals.map((total) => formatMoney(total.amount, total.currency)).join(', ');
      const what = file.legacy
        ? 'legacy: payouts made before payment files were stored (not kept, not downloadable)'
        : `${file.message_id} execution ${file.requested_execution_date}`;
      return `${String(file.sequence).padStart(2, '0')}  ${what}  ${transfers} payout(s)${totals ? ` ${totals}` : ''}  written ${file.created_at.toISOString()} by ${file.created_by}  id ${file.id}\n`;
    })
    .join('');
}

/**
 * The reconciliation CSV (or, with `summary`, its per-payroll summary) of a pay date, streamed to `out`
 * or stdout: the same bytes as GET /reports/reconciliation answers an operator.
 */
export async function exportReconciliation(
  db: Database,
  options: { payDate: string; payrollId?: string | undefined; summary?: boolean | undefined; out?: string | undefined },
): Promise<void> {
  const { writeReconciliationCsv, writeReconciliationSummaryCsv } = await import('../../settlement/reports/reconciliation-report.ts');
  const filter = { payDate: options.payDate, payrollId: options.payrollId };
  const destination = options.out ? await privateFileStream(options.out) : process.stdout;
  const end = options.out !== undefined;
  if (options.summary) await writeReconciliationSummaryCsv(db, filter, destination, { end });
  else await writeReconciliationCsv(db, filter, destination, { end });
}

/** The three-way reconciliation CSV of a pay date to `out` or stdout: the same bytes as GET /reports/three-way. */
export async function exportThreeWay(db: Executor, options: { payDate: string; out?: string | undefined }): Promise<void> {
  const { writeThreeWayCsv } = await import('../../settlement/reports/three-way-report.ts');
  const destination = options.out ? await privateFileStream(options.out) : process.stdout;
  await writeThreeWayCsv(db, options.payDate, destination, { end: options.out !== undefined });
}

export function registerExportCommands(program: Command): void {
  const exportCommand = program.commands.find((c) => c.name() === 'export') ?? program.command('export').description('Write CSV and bank files');

  exportCommand
    .command('payouts')
    .description(
      'Write a payment file (CSV, or ISO 20022 pain.001.001.09 XML) of the payouts made on a date: by default the payouts ' +
        "no file holds yet are first written into a new stored file, then the date's latest file is exported; --file N " +
        "exports file N of the date as stored; --list lists the date's files",
    )
    .requiredOption('--date <date>', 'payout date (YYYY-MM-DD)', parseDateOption)
    .addOption(new Option('--format <format>', 'csv, or pain.001 for the credit transfer initiation the bank imports').choices(PAYMENT_FILE_FORMATS).default('csv'))
    .option('--file <number>', 'export this file of the date (1, 2...) as stored; nothing new is written', parseWholeNumber)
    .option('--list', "list the date's payment files instead (nothing is written)")
    .option('--by <name>', 'who writes a new file, kept on it and in the audit log (default: the OS user)')
    .option('--out <file>', 'output file, readable by its owner only (default: stdout)')
    .action(async (options: { date: string; format: PaymentFileFormat; file?: number; list?: boolean; by?: string; out?: string }) => {
      const runtime = await openExportRuntime();
      try {
        if (options.list) {
          const { listPaymentFilesOfDate } = await import('../../settlement/payouts/payment-file-repository.ts');
          const files = await listPaymentFilesOfDate(runtime.db, options.date);
          process.stdout.write(files.length === 0 ? `No payment file of ${options.date}\n` : describePaymentFiles(files));
          return;
        }
        const { download, written } = await exportPayouts(runtime.db, { ...options, actor: cliActor(operatorName(options.by)) });
        const file = download.file;
        const transfers = file.totals.reduce((sum, total) => sum + total.transfers, 0);
        if (written.length > 1) {
          process.stderr.write(`Wrote ${written.length} new payment files of ${options.date} (one pain.001 message cannot carry their totals): export each with --file\n`);
        }
        const fresh = written.some((candidate) => candidate.id === file.id);
        process.stderr.write(
          `${fresh ? 'New payment file' : 'Payment file'} ${file.sequence} of ${options.date} (${file.message_id}, execution ${file.requested_execution_date}): ` +
            `${transfers} payout(s)${options.out ? ` to ${options.out}` : ''}` +
            `${!fresh && options.file === undefined ? '; no payout of the date was waiting for a file, so this is the latest file again, as stored' : ''}\n`,
        );
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
    .option('--out <file>', 'output file, readable by its owner only (default: stdout)')
    .action(async (options: { payDate: string; payroll?: string; summary?: boolean; out?: string }) => {
      const runtime = await openExportRuntime();
      try {
        // A report: off the read replica while it is within DATABASE_READ_MAX_LAG_SECONDS, else the primary.
        const { readSource } = await import('../../platform/db/read-replica.ts');
        const { db } = await readSource(runtime);
        await exportReconciliation(db, {
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
    .option('--out <file>', 'output file, readable by its owner only (default: stdout)')
    .action(async (options: { payDate: string; out?: string }) => {
      const runtime = await openExportRuntime();
      try {
        const { readSource } = await import('../../platform/db/read-replica.ts');
        const { db } = await readSource(runtime);
        await exportThreeWay(db, { payDate: options.payDate, out: options.out });
        if (options.out) process.stderr.write(`Wrote the three-way reconciliation for ${options.payDate} to ${options.out}\n`);
      } finally {
        await runtime.close();
      }
    });
}
