import { Command, Option } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import { consoleRoles, type ConsoleRole } from '../console/console-permissions.ts';
import { generatePassword, passwordCost } from '../console/password-hash.ts';
import { withDatabase } from './command-database.ts';
import { operatorName } from './options.ts';

/** The first line of standard input: a password piped in never appears in the process list or shell history. */
async function passwordFromStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

const passwordOption = new Option('--password-stdin', 'read the password from the first line of standard input (otherwise one is generated and printed once)');

export function registerConsoleUserCommands(program: Command): void {
  const users = program.command('console-users').description('People who sign in to the operations console (/console): roles operator, finance, viewer');

  users
    .command('create')
    .description('Create a console user; prints a generated password once unless --password-stdin')
    .requiredOption('--email <email>', 'sign-in email, unique')
    .requiredOption('--name <name>', 'display name')
    .addOption(
      new Option('--role <role>', 'operator (re-runs, retries, redeliveries), finance (settles payouts) or viewer (reads)').choices(consoleRoles).makeOptionMandatory(),
    )
    .addOption(passwordOption)
    .option('--by <name>', 'who creates it (default: the OS user)')
    .action(async (options: { email: string; name: string; role: ConsoleRole; passwordStdin?: boolean; by?: string }) => {
      const password = options.passwordStdin ? await passwordFromStdin() : generatePassword();
      const { createConsoleUser } = await import('../console/console-user-service.ts');
      const { loadConfig } = await import('../../platform/config/config.ts');
      await withDatabase(async (db) => {
        const cost = passwordCost(loadConfig().CONSOLE_PASSWORD_SCRYPT_LOG_N);
        const user = await createConsoleUser(db, cliActor(operatorName(options.by)), { email: options.email, name: options.name, role: options.role, password }, cost);
        console.log(`created console user ${user.email} (${user.role}) ${user.id}`);
        if (!options.passwordStdin) console.log(`password (shown this once): ${password}`);
      });
    });

  users
    .command('list')
    .description('Every console user with role, state and last sign-in')
    .action(async () => {
      const { listConsoleUsers } = await import('../console/console-user-service.ts');
      await withDatabase(async (db) => {
        const rows = await listConsoleUsers(db);
        if (rows.length === 0) console.log('no console users; create one with: deductions console-users create --email ... --name ... --role operator');
        for (const user of rows) {
          // Accounts are never locked: failed sign-ins hold back where they come from (sign-in-throttle.ts).
          const state = user.disabled_at ? `disabled since ${user.disabled_at.toISOString()}` : 'enabled';
          const last = user.last_signed_in_at ? `last sign-in ${user.last_signed_in_at.toISOString()}` : 'never signed in';
          console.log(`${user.email.padEnd(32)} ${user.role.padEnd(9)} ${state.padEnd(44)} ${last}  ${user.name}`);
        }
      });
    });

  for (const [command, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    users
      .command(command)
      .description(enabled ? 'Let a disabled console user sign in again' : 'Stop a console user signing in and end their sessions now')
      .requiredOption('--email <email>', 'the user')
      .option('--reason <reason>', 'why, for the audit log')
      .option('--by <name>', 'who does it (default: the OS user)')
      .action(async (options: { email: string; reason?: string; by?: string }) => {
        const { setConsoleUserEnabled } = await import('../console/console-user-service.ts');
        await withDatabase(async (db) => {
          const { user, sessionsEnded } = await setConsoleUserEnabled(db, cliActor(operatorName(options.by)), options.email, enabled, options.reason ?? null);
          console.log(enabled ? `enabled ${user.email}` : `disabled ${user.email}; ${sessionsEnded} session(s) ended`);
        });
      });
  }

  users
    .command('set-password')
    .description("Give a console user a new password (also unlocks the account and ends the user's sessions)")
    .requiredOption('--email <email>', 'the user')
    .addOption(passwordOption)
    .option('--by <name>', 'who does it (default: the OS user)')
    .action(async (options: { email: string; passwordStdin?: boolean; by?: string }) => {
      const password = options.passwordStdin ? await passwordFromStdin() : generatePassword();
      const { setConsoleUserPassword } = await import('../console/console-user-service.ts');
      const { loadConfig } = await import('../../platform/config/config.ts');
      await withDatabase(async (db) => {
        const user = await setConsoleUserPassword(db, cliActor(operatorName(options.by)), options.email, password, passwordCost(loadConfig().CONSOLE_PASSWORD_SCRYPT_LOG_N));
        console.log(`new password set for ${user.email}; its sessions ended`);
        if (!options.passwordStdin) console.log(`password (shown this once): ${password}`);
      });
    });
}
