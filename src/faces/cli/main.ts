import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Config } from '../../platform/config/config.ts';
import type { Composition, LoadComposition } from './composition.ts';
import { projectPath } from '../../platform/shared/project-files.ts';
import { registerAuditCommand } from './audit-command.ts';
import { registerBankHolidayCommands, registerCalendarCommands } from './calendar-commands.ts';
import { registerCashCommands } from './cash-commands.ts';
import { registerClientCommands } from './clients-command.ts';
import { registerConsoleUserCommands } from './console-users-command.ts';
import { registerDeductionReturnCommands } from './deduction-return-commands.ts';
import { registerDeductionCommands } from './deductions-commands.ts';
import { registerDemoCommand } from './demo-command.ts';
import { registerDirectoryCommands } from './directory-commands.ts';
import { registerEmployeeCommands } from './employee-commands.ts';
import { registerExportCommands } from './export-commands.ts';
import { registerNightlyCommand } from './nightly-command.ts';
import { registerBeneficiaryAccountCommands, registerPayoutCommands } from './payout-commands.ts';
import { registerRunsCommands } from './runs-command.ts';
import { registerSandboxCommands } from './sandbox-commands.ts';
import { registerSecretsCommands } from './secrets-command.ts';
import { registerServiceCommands } from './service-commands.ts';
import { registerStatusCommand } from './status-command.ts';
import { registerWebhookCommands } from './webhook-commands.ts';

const { version } = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string };

export type CommandModule =
  | { commands: readonly string[]; register: (program: Command) => void }
  | { commands: readonly string[]; usesComposition: true; register: (program: Command, loadComposition: LoadComposition) => void };

/**
 * Where each top-level command is defined. The modules hold only the definitions (names, options,
 * descriptions, option parsers), which load nothing but commander and a few light modules: each
 * action imports the services it calls when it runs, so `--help`, and a command, load only what that
 * command needs. `commands` must be what the module registers; a test holds the table to the modules.
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { commands: ['migrate', 'serve', 'work', 'start'], usesComposition: true, register: registerServiceCommands },
  { commands: ['clients'], register: registerClientCommands },
  { commands: ['console-users'], register: registerConsoleUserCommands },
  { commands: ['nightly'], usesComposition: true, register: registerNightlyCommand },
  // Before export-commands: `export instructions` comes first in `export --help`.
  { commands: ['rerun', 'export'], usesComposition: true, register: registerDeductionCommands },
  { commands: ['demo'], usesComposition: true, register: registerDemoCommand },
  { commands: ['payouts'], register: registerPayoutCommands },
  { commands: ['statements', 'credits', 'unmatch', 'remittances'], register: registerCashCommands },
  { commands: ['beneficiary-accounts'], register: registerBeneficiaryAccountCommands },
  { commands: ['export'], register: registerExportCommands },
  { commands: ['webhooks'], register: registerWebhookCommands },
  { commands: ['status'], register: registerStatusCommand },
  { commands: ['audit'], register: registerAuditCommand },
  { commands: ['runs'], register: registerRunsCommands },
  { commands: ['secrets'], register: registerSecretsCommands },
  { commands: ['bank-holidays'], register: registerBankHolidayCommands },
  { commands: ['calendars'], register: registerCalendarCommands },
  { commands: ['providers', 'employers', 'payrolls', 'collection-accounts'], register: registerDirectoryCommands },
  { commands: ['employees'], register: registerEmployeeCommands },
  { commands: ['deduction-returns'], register: registerDeductionReturnCommands },
  { commands: ['sandbox'], register: registerSandboxCommands },
];

/**
 * The modules a command line needs: those defining its command (the first word that is not an option:
 * the program's own options, --help and --version, take no value). With no command, `help`, or a word
 * no module defines, all of them, so help lists everything and a mistyped command gets a suggestion.
 */
export function commandModulesFor(args: readonly string[]): readonly CommandModule[] {
  const command = args.find((arg) => !arg.startsWith('-'));
  const defining = COMMAND_MODULES.filter((module) => command !== undefined && module.commands.includes(command));
  return defining.length > 0 ? defining : COMMAND_MODULES;
}

/** Whether a command line asks for a command's help (`deductions help <command>` names no module's command). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  const options = end === -1 ? args : args.slice(0, end);
  return options.includes('--help') || options.includes('-h');
}

/**
 * The `deductions` program with the commands `args` (the words after the program's name) need. The
 * commands that run the API or workers take them from the composition: loaded here for a command
 * line naming one of them (the API's routes and every job's processors, before anything else), never
 * for help, and otherwise by the action that needs it.
 */
export async function buildProgram(loadComposition: LoadComposition, args: readonly string[]): Promise<Command> {
  const program = new Command()
    .name('deductions')
    .description('Salary-deduction payments service: API, nightly pay-date worker and operator tools')
    .version(version)
    // Program options only before the command, so `export instructions --version N` is the file's version.
    .enablePositionalOptions()
    // Every failure is one line on stderr; commander's own (unknown command, missing option) included.
    .configureOutput({ outputError: (text, write) => write(`${text.trim().replace(/\s*\n\s*/g, ' ')}\n`) })
    // Help and --version need no configuration (nor its module); every command checks all of it before doing anything.
    .hook('preAction', async () => {
      (await import('../../platform/config/config.ts')).loadConfig();
    });

  let composition: Promise<Composition> | undefined;
  const loadOnce = () => (composition ??= loadComposition());
  const modules = commandModulesFor(args);
  for (const module of modules) await registerCommandModule(program, module, loadOnce);
  if (modules !== COMMAND_MODULES && modules.some((module) => 'usesComposition' in module) && !asksForHelp(args)) await loadOnce();
  return program;
}

/** Adds a module's commands to `program`; a module that takes the composition gets the way to load it. */
export async function registerCommandModule(program: Command, module: CommandModule, loadComposition: LoadComposition): Promise<void> {
  if ('usesComposition' in module) module.register(program, loadComposition);
  else module.register(program);
}

async function configIfValid(): Promise<Config | undefined> {
  try {
    return (await import('../../platform/config/config.ts')).loadConfig();
  } catch {
    return undefined;
  }
}

/** Runs the command line `argv` (node's, as process.argv): a failure is one line on stderr and the exit code. */
export async function runCli(loadComposition: LoadComposition, argv: readonly string[]): Promise<void> {
  try {
    const program = await buildProgram(loadComposition, argv.slice(2));
    await program.parseAsync(argv);
  } catch (error) {
    const config = await configIfValid();
    const { describeFailure } = await import('./failures.ts');
    const failure = describeFailure(error, config);
    process.stderr.write(`${failure.message}\n`);
    const logLevel = config?.LOG_LEVEL ?? process.env.LOG_LEVEL;
    if ((logLevel === 'debug' || logLevel === 'trace') && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
    // Connections a failed command opened would otherwise keep the process alive.
    process.exit(failure.exitCode);
  }
}
