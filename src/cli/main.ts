import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { loadConfig, type Config } from '../config/config.ts';
import type { Composition } from './composition.ts';
import { describeFailure } from './failures.ts';
import { projectPath } from '../shared/project-files.ts';

const { version } = JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { version: string };

export type CommandModule =
  | { commands: readonly string[]; load: () => Promise<(program: Command) => void> }
  | { commands: readonly string[]; usesComposition: true; load: () => Promise<(program: Command, composition: Composition) => void> };

/**
 * Where each top-level command is defined. A command line loads only the modules of its command (and
 * the API's routes and job processors only for the commands that run them): loading every module took
 * about twice as long as one, and operators and scripts pay that on every call. `commands` must be what
 * the module registers; a test holds the table to the modules.
 */
export const COMMAND_MODULES: readonly CommandModule[] = [
  { commands: ['migrate', 'serve', 'work', 'start'], usesComposition: true, load: async () => (await import('./service-commands.ts')).registerServiceCommands },
  { commands: ['clients'], load: async () => (await import('./clients-command.ts')).registerClientCommands },
  { commands: ['console-users'], load: async () => (await import('./console-users-command.ts')).registerConsoleUserCommands },
  { commands: ['nightly'], usesComposition: true, load: async () => (await import('./nightly-command.ts')).registerNightlyCommand },
  // Before export-commands: `export instructions` comes first in `export --help`.
  { commands: ['rerun', 'export'], usesComposition: true, load: async () => (await import('./deductions-commands.ts')).registerDeductionCommands },
  { commands: ['demo'], usesComposition: true, load: async () => (await import('./demo-command.ts')).registerDemoCommand },
  { commands: ['payouts'], load: async () => (await import('./payout-commands.ts')).registerPayoutCommands },
  { commands: ['statements', 'credits', 'unmatch', 'remittances'], load: async () => (await import('./cash-commands.ts')).registerCashCommands },
  { commands: ['beneficiary-accounts'], load: async () => (await import('./payout-commands.ts')).registerBeneficiaryAccountCommands },
  { commands: ['export'], load: async () => (await import('./export-commands.ts')).registerExportCommands },
  { commands: ['webhooks'], load: async () => (await import('./webhook-commands.ts')).registerWebhookCommands },
  { commands: ['status'], load: async () => (await import('./status-command.ts')).registerStatusCommand },
  { commands: ['audit'], load: async () => (await import('./audit-command.ts')).registerAuditCommand },
  { commands: ['runs'], load: async () => (await import('./runs-command.ts')).registerRunsCommands },
  { commands: ['secrets'], load: async () => (await import('./secrets-command.ts')).registerSecretsCommands },
  { commands: ['bank-holidays'], load: async () => (await import('./calendar-commands.ts')).registerBankHolidayCommands },
  { commands: ['calendars'], load: async () => (await import('./calendar-commands.ts')).registerCalendarCommands },
  { commands: ['providers', 'employers', 'payrolls', 'collection-accounts'], load: async () => (await import('./directory-commands.ts')).registerDirectoryCommands },
  { commands: ['employees'], load: async () => (await import('./employee-commands.ts')).registerEmployeeCommands },
  { commands: ['sandbox'], load: async () => (await import('./sandbox-commands.ts')).registerSandboxCommands },
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

/**
 * The `deductions` program with the commands `args` (the words after the program's name) need; the
 * commands that run the API or workers take them from the composition, loaded only for them.
 */
export async function buildProgram(loadComposition: () => Promise<Composition>, args: readonly string[]): Promise<Command> {
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

  let composition: Promise<Composition> | undefined;
  const loadOnce = () => (composition ??= loadComposition());
  for (const module of commandModulesFor(args)) await registerCommandModule(program, module, loadOnce);
  return program;
}

/** Adds a module's commands to `program`, loading the composition only for a module that takes it. */
export async function registerCommandModule(program: Command, module: CommandModule, loadComposition: () => Promise<Composition>): Promise<void> {
  if ('usesComposition' in module) (await module.load())(program, await loadComposition());
  else (await module.load())(program);
}

function configIfValid(): Config | undefined {
  try {
    return loadConfig();
  } catch {
    return undefined;
  }
}

/** Runs the command line `argv` (node's, as process.argv): a failure is one line on stderr and the exit code. */
export async function runCli(loadComposition: () => Promise<Composition>, argv: readonly string[]): Promise<void> {
  try {
    const program = await buildProgram(loadComposition, argv.slice(2));
    await program.parseAsync(argv);
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
