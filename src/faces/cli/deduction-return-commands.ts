import { readFile, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import type { ImportErrorFile } from '../../directory/payrolls/employee-import-error-file.ts';
import type { DeductionReturnReport } from '../../cycle/deduction-returns/return-resource.ts';
import type { RedisTarget } from '../../platform/runtime/redis-connections.ts';
import { InvalidError } from '../../platform/shared/domain-errors.ts';
import { operatorName, parseDateOption, parseUuidOption } from './options.ts';

/** With --json, stdout holds the one JSON object; the way to the full error list goes to stderr. */
async function printReport(report: DeductionReturnReport, json: boolean | undefined, errorsFile: string | undefined): Promise<void> {
  if (json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    if (report.errors_truncated && errorsFile === undefined) {
      process.stderr.write(`${report.error_count - report.errors.length} more errors not listed; --errors-out FILE writes every one (line,column,reason)\n`);
    }
    return;
  }
  const { describeReturnImport } = await import('../../cycle/deduction-returns/return-report-text.ts');
  process.stdout.write(`${describeReturnImport(report, errorsFile)}\n`);
}

async function readReturnFile(path: string): Promise<Buffer> {
  const { MAX_RETURN_FILE_BYTES } = await import('../../cycle/deduction-returns/return-file.ts');
  try {
    const size = (await stat(path)).size;
    if (size > MAX_RETURN_FILE_BYTES) throw new InvalidError('unreadable-file', `${path} is ${size} bytes; a deduction return file may be at most ${MAX_RETURN_FILE_BYTES}`);
    return await readFile(path);
  } catch (error) {
    if (error instanceof InvalidError) throw error;
    throw new InvalidError('unreadable-file', `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export function registerDeductionReturnCommands(program: Command): void {
  const returns = program
    .command('deduction-returns')
    .description(
      "What payroll deducted, from the deduction return file beside each instruction file (`export deduction-return` writes it pre-filled): imported as the pay date's confirmation",
    );

  returns
    .command('import')
    .description(
      "Import a payroll pay date's deduction return file as its confirmation, exactly as the provider's API confirmation (bad records listed with line and column; nothing confirmed unless --partial)",
    )
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <date>', 'the pay date the file answers (YYYY-MM-DD); its header must name it too', parseDateOption)
    .requiredOption('--file <path>', 'the return file (CSV)')
    .option('--dry-run', 'check and report what would be confirmed; write nothing')
    .option('--partial', 'confirm the good items even when some are bad (a wrong header or trailer still refuses the file)')
    .option('--errors-out <file>', 'write every error to this CSV file (line,column,reason), however many; the report lists the first 1,000')
    .option('--reason <text>', 'why (kept in the audit log)')
    .option('--by <name>', 'who imports (default: the OS user)')
    .option('--json', 'print the report as JSON')
    .action(
      async (options: {
        payroll: string;
        payDate: string;
        file: string;
        dryRun?: boolean;
        partial?: boolean;
        errorsOut?: string;
        reason?: string;
        by?: string;
        json?: boolean;
      }) => {
        const content = await readReturnFile(options.file);
        const { openImportErrorFile } = await import('../../directory/payrolls/employee-import-error-file.ts');
        const { DeductionReturnRejected, importDeductionReturn } = await import('../../cycle/deduction-returns/return-service.ts');
        const { reportedLimitsOf } = await import('../../cycle/deduction-records/reported-limits.ts');
        const { loadConfig } = await import('../../platform/config/config.ts');
        const { openRuntime } = await import('../../platform/runtime/runtime.ts');
        let errorsFile: ImportErrorFile | undefined;
        try {
          errorsFile = options.errorsOut === undefined ? undefined : await openImportErrorFile(options.errorsOut);
        } catch (error) {
          throw new InvalidError('unwritable-file', `Cannot write ${options.errorsOut}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
        }
        const config = loadConfig();
        const runtime = await openRuntime({ ...config, LOG_LEVEL: 'warn' }, 'deduction-returns');
        let listed = false;
        try {
          const report = await runtime.db.transaction().execute((trx) =>
            importDeductionReturn(trx, {
              payrollId: options.payroll,
              payDate: options.payDate,
              content,
              dryRun: options.dryRun ?? false,
              partial: options.partial ?? false,
              submitter: { kind: 'operator', actor: cliActor(operatorName(options.by)) },
              limits: reportedLimitsOf(config),
              reason: options.reason ?? null,
              ...(errorsFile ? { errorSink: errorsFile } : {}),
            }),
          );
          await errorsFile?.close();
          listed = true;
          await printReport(report, options.json, errorsFile?.path);
          if (report.applied) await requestReconciliation(config, report);
        } catch (error) {
          if (error instanceof DeductionReturnRejected) {
            await errorsFile?.close();
            listed = true;
            await printReport(error.report, options.json, errorsFile?.path);
          }
          (await import('./failures.ts')).reportRefusal(error);
        } finally {
          // A file that could not be checked (an unknown payroll, a pay date not locked) leaves no half list behind.
          if (!listed) await errorsFile?.discard();
          await runtime.close();
        }
      },
    );
}

/**
 * The workers reconcile the pay date a few seconds after the confirmation, as after the API's; when the
 * queue cannot be reached, the nightly sweep reconciles it instead, and the operator is told.
 */
async function requestReconciliation(config: RedisTarget & { QUEUE_PREFIX: string }, report: DeductionReturnReport): Promise<void> {
  const { queueReconciliationRequester } = await import('../../cycle/reconciliation/reconciliation-requests.ts');
  const requester = queueReconciliationRequester(config, config.QUEUE_PREFIX);
  try {
    await requester.request(report.payroll_id, report.pay_date);
  } catch (error) {
    process.stderr.write(`Could not queue the reconciliation of pay date ${report.pay_date} (${(error as Error).message}): the nightly run reconciles it\n`);
  } finally {
    await requester.close().catch(() => undefined);
  }
}
