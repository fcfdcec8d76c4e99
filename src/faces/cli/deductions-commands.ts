import type { Command } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import type { RerunResult } from '../workers/rerun-runner.ts';
import type { LoadComposition } from './composition.ts';
import { operatorName, parseDateOption, parseUuidOption } from './options.ts';
import { writePrivateFile } from './private-file.ts';

/** What the operator sees: which re-run answered, who else asked for it and why, and what it wrote. */
export function formatRerunResult(result: RerunResult): string {
  const others = result.requests.length - 1;
  const lines = [
    result.joined
      ? `Joined re-run ${result.rerunId} (${others} other request${others === 1 ? '' : 's'} for payroll ${result.payrollId} pay date ${result.payDate})`
      : `Re-run ${result.rerunId} of payroll ${result.payrollId} pay date ${result.payDate}`,
    ...result.requests.map((r) => `  requested by ${r.requestedBy} at ${r.requestedAt}: ${r.reason}`),
    `  snapshot ${result.previousSnapshotId} superseded by ${result.snapshotId} (version ${result.snapshotVersion})`,
    `  instruction file ${result.instructionFile}`,
  ];
  return lines.join('\n');
}

export function registerDeductionCommands(program: Command, loadComposition: LoadComposition): void {
  program
    .command('rerun')
    .description("Re-run one payroll's pay date: a new snapshot version and instruction file, with an audit record")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <date>', 'pay date (YYYY-MM-DD)', parseDateOption)
    .requiredOption('--reason <text>', 'why (kept in the audit record)')
    .option('--by <name>', 'who asks (default: the OS user)')
    .action(async (options: { payroll: string; payDate: string; reason: string; by?: string }) => {
      const { startWorkers } = await loadComposition();
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { runRerunNow } = await import('../workers/rerun-runner.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'rerun');
      try {
        const outcome = await runRerunNow(
          runtime,
          { payrollId: options.payroll, payDate: options.payDate, reason: options.reason, actor: cliActor(operatorName(options.by)) },
          { startWorkers },
        );
        process.stdout.write(`${formatRerunResult(outcome)}\n`);
      } finally {
        await runtime.close();
      }
    });

  const exportCommand = program.commands.find((c) => c.name() === 'export') ?? program.command('export').description('Write CSV files');
  exportCommand
    .command('instructions')
    .description("Write a payroll pay date's instruction file (newest version unless --version)")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <date>', 'pay date (YYYY-MM-DD)', parseDateOption)
    .option('--version <n>', 'file version', (v) => Number.parseInt(v, 10))
    .option('--out <file>', 'output file, readable by its owner only (default: stdout)')
    .action(async (options: { payroll: string; payDate: string; version?: number; out?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { findInstructionFile } = await import('../../cycle/instructions/instruction-repository.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'export');
      try {
        const file = await findInstructionFile(runtime.db, options.payroll, options.payDate, options.version);
        if (!file) {
          process.stderr.write(`No instruction file for payroll ${options.payroll} on ${options.payDate}\n`);
          process.exitCode = 1;
          return;
        }
        if (options.out) {
          // Employees' deductions: the owner's eyes only (0600).
          await writePrivateFile(options.out, file.content);
          process.stderr.write(`Wrote ${file.file_name} (sha256 ${file.sha256}) to ${options.out}\n`);
        } else {
          process.stdout.write(file.content);
        }
      } finally {
        await runtime.close();
      }
    });
}
