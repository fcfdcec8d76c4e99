import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { loadConfig, type Config } from '../config/config.ts';
import type { Composition } from './composition.ts';
import { registerAuditCommand } from './audit-command.ts';
import { registerBankHolidayCommands, registerCalendarCommands } from './calendar-commands.ts';
import { registerCashCommands } from './cash-commands.ts';
import { registerClientCommands } from './clients-command.ts';
import { registerConsoleUserCommands } from './console-users-command.ts';
import { registerDeductionCommands } from './deductions-commands.ts';
import { registerDirectoryCommands } from './directory-commands.ts';
import { registerDemoCommand } from './demo-command.ts';
import { registerEmployeeCommands } from './employee-commands.ts';
import { registerExportCommands } from './export-commands.ts';
import { describeFailure } from './failures.ts';
import { registerNightlyCommand } from './nightly-command.ts';
import { registerBeneficiaryAccountCommands, registerPayoutCommands } from './payout-commands.ts';
import { registerRunsCommands } from './runs-command.ts';
import { registerServiceCommands } from './service-commands.ts';
import { registerSecretsCommands } from './secrets-command.ts';
import { registerSandboxCommands } from './sandbox-commands.ts';
import { registerStatusCommand } from './status-command.ts';
import { registerWebhookCommands } from './webhook-commands.ts';

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** The `deductions` program; the commands that run the API or workers take them from `composition`. */
export function buildProgram(composition: Composition): Command {
  const program = new Command()
    .name('deductions')
    .description('Salary-deduction payments service: API, nightly pay-date worker and operator tools')
    .version(version)
    // Program options only before the command, so `export instructions --version N` is the file's version.
    .enablePositionalOptions()
    // Every failure is one line on stderr; commander's own (unknown command, missing option) included.
    .configureOutput({ outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')}\n`) })
    // Help and --version need no configuration; every command checks all of it before doing anything.
    .hook('preAction', () => {
      loadConfig();
    });

  registerServiceCommands(program, composition);
  registerClientCommands(program);
  registerConsoleUserCommands(program);
  registerNightlyCommand(program, composition);
  registerDeductionCommands(program, composition);
  registerDemoCommand(program, composition);
  registerPayoutCommands(program);
  registerCashCommands(program);
  registerBeneficiaryAccountCommands(program);
  registerExportCommands(program);
  registerWebhookCommands(program);
  registerStatusCommand(program);
  registerAuditCommand(program);
  registerRunsCommands(program);
  registerSecretsCommands(program);
  registerBankHolidayCommands(program);
  registerCalendarCommands(program);
  registerDirectoryCommands(program);
  registerEmployeeCommands(program);
  registerSandboxCommands(program);
  return program;
}

function configIfValid(): Config | undefined {
  try {
    return loadConfig();
  } catch {
    return undefined;
  }
}

/** Runs the command line `argv` (node's, as process.argv): a failure is one line on stderr and the exit code. */
export async function runCli(composition: Composition, argv: readonly string[]): Promise<void> {
  try {
    await buildProgram(composition).parseAsync(argv);
  } catch (error) {
    const config = configIfValid();
    const failure = describeFailure(error, config);
    process.stderr.write(`${failure.message}\n`);
    const logLevel = config?.LOG_LEVEL ?? process.env.LOG_LEVEL;
    if ((logLevel === 'debug' || logLevel === 'trace') && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    // Connections a failed command opened would otherwise keep the process alive.
    process.exit(failure.exitCode);
  }
}
