import { createInterface } from 'node:readline/promises';
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
    ...(result.payDateState === 'reconciled' || result.payDateState === 'paid_out'
      ? [`  confirmed: the pay date was ${result.payDateState === 'paid_out' ? 'paid out' : 'reconciled'} when asked`]
      : []),
    `  snapshot ${result.previousSnapshotId} superseded by ${result.snapshotId} (version ${result.snapshotVersion})`,
    `  instruction file ${result.instructionFile}`,
  ];
  return lines.join('\n');
}

/** A terminal the person at it can answer on; anything else (a pipe, a script, cron) is not asked. */
export interface Terminal {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * Asks the person at the terminal to confirm re-running a pay date whose money has moved: true when
 * they type "yes", false for anything else, null when there is no terminal to ask on (then only
 * --force re-runs it).
 */
export async function confirmRerunAtTerminal(question: string, terminal: Terminal): Promise<boolean | null> {
  if (!terminal.input.isTTY || !terminal.output.isTTY) return null;
  const prompt = createInterface({ input: terminal.input, output: terminal.output, terminal: false });
  try {
    const answer = await prompt.question(`${question}.\nRe-run it anyway? Type yes to confirm: `);
    return answer.trim().toLowerCase() === 'yes';
  } finally {
    prompt.close();
  }
}

export function registerDeductionCommands(program: Command, loadComposition: LoadComposition): void {
  program
    .command('rerun')
    .description("Re-run one payroll's pay date: a new snapshot version and instruction file, with an audit record")
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <date>', 'pay date (YYYY-MM-DD)', parseDateOption)
    .requiredOption('--reason <text>', 'why (kept in the audit record)')
    .option('--by <name>', 'who asks (default: the OS user)')
    .option('--force', 're-run a pay date already reconciled or paid out without asking (at a terminal the command asks; elsewhere it refuses without --force)')
    .action(async (options: { payroll: string; payDate: string; reason: string; by?: string; force?: boolean }) => {
      const { startWorkers } = await loadComposition();
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { runRerunNow } = await import('../workers/rerun-runner.ts');
      const { DomainError } = await import('../../platform/shared/domain-errors.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'rerun');
      const request = { payrollId: options.payroll, payDate: options.payDate, reason: options.reason, actor: cliActor(operatorName(options.by)) };
      try {
        let outcome;
        try {
          outcome = await runRerunNow(runtime, { ...request, force: options.force === true }, { startWorkers });
        } catch (error) {
          if (!(error instanceof DomainError) || error.code !== 'rerun-confirmation-required') throw error;
          // Nothing was recorded: the pay date's money has moved, and a person must say so.
          const confirmed = await confirmRerunAtTerminal(error.detail, { input: process.stdin, output: process.stdout });
          if (confirmed === null) {
            process.stderr.write(`${error.detail}: run it again with --force to re-run it anyway\n`);
            process.exitCode = 1;
            return;
          }
          if (!confirmed) {
            process.stderr.write('Not re-run.\n');
            process.exitCode = 1;
            return;
          }
          outcome = await runRerunNow(runtime, { ...request, force: true }, { startWorkers });
        }
        process.stdout.write(`${formatRerunResult(outcome)}\n`);
      } finally {
        await runtime.close();
      }
    });

  /** An instruction or return file to --out (employees' deductions: the owner's eyes only, 0600), else to stdout. */
  async function writeDeductionFile(file: { file_name: string; sha256: string; content: Buffer | string }, out: string | undefined): Promise<void> {
    if (out === undefined) {
      process.stdout.write(file.content);
      return;
    }
    await writePrivateFile(out, file.content);
    process.stderr.write(`Wrote ${file.file_name} (sha256 ${file.sha256}) to ${out}\n`);
  }

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
        await writeDeductionFile(file, options.out);
      } finally {
        await runtime.close();
      }
    });

  exportCommand
    .command('deduction-return')
    .description(
      "Write the deduction return file of a payroll pay date's instruction file (newest version unless --version), pre-filled with what it asks: payroll writes what it deducted, then `deduction-returns import`",
    )
    .requiredOption('--payroll <id>', 'payroll id', parseUuidOption)
    .requiredOption('--pay-date <date>', 'pay date (YYYY-MM-DD)', parseDateOption)
    .option('--version <n>', 'instruction file version', (v) => Number.parseInt(v, 10))
    .option('--out <file>', 'output file, readable by its owner only (default: stdout)')
    .action(async (options: { payroll: string; payDate: string; version?: number; out?: string }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const { deductionReturnFileOf } = await import('../../cycle/deduction-returns/return-service.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'export');
      try {
        const file = await deductionReturnFileOf(runtime.db, options.payroll, options.payDate, options.version);
        await writeDeductionFile(file, options.out);
      } finally {
        await runtime.close();
      }
    });
}
