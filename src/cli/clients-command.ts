import { Command, Option } from 'commander';
import { loadConfig } from '../config/config.ts';
import { createClient } from '../auth/clients-service.ts';
import { scopes, scopeSchema, type Scope } from '../auth/scopes.ts';
import { createDatabase } from '../db/connection.ts';
import type { ClientRole } from '../db/tables.ts';
import { parseUuidOption } from './options.ts';

function parseScopes(value: string): Scope[] {
  return value.split(/[\s,]+/).filter(Boolean).map((scope) => scopeSchema.parse(scope));
}

export function registerClientCommands(program: Command): void {
  const clients = program.command('clients').description('Manage API clients');
  clients
    .command('create')
    .description('Create a client and print its id, secret and API key (shown this once only)')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--role <role>', 'client role').choices(['biller', 'payroll_provider', 'operator']).makeOptionMandatory())
    .option('--scopes <scopes>', `space- or comma-separated scopes (default: the role's); known: ${scopes.join(' ')}`, parseScopes)
    .option('--payroll-provider <id>', 'payroll provider this client acts for (role payroll_provider)', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { name: string; role: ClientRole; scopes?: Scope[]; payrollProvider?: string; json?: boolean }) => {
      if ((options.role === 'payroll_provider') !== Boolean(options.payrollProvider)) {
        program.error('--payroll-provider is required for, and only for, role payroll_provider');
      }
      const db = createDatabase(loadConfig().DATABASE_URL, 1);
      try {
        const issued = await createClient(db, {
          name: options.name,
          role: options.role,
          ...(options.scopes ? { scopes: options.scopes } : {}),
          payrollProviderId: options.payrollProvider ?? null,
        });
        if (options.json) {
          process.stdout.write(`${JSON.stringify(issued, null, 2)}\n`);
        } else {
          process.stdout.write(
            [
              `client_id:     ${issued.clientId}`,
              `client_secret: ${issued.clientSecret}`,
              `api_key:       ${issued.apiKey}`,
              `role:          ${issued.role}`,
              `scopes:        ${issued.scopes.join(' ')}`,
              '',
              'Store the secret and API key now: they are kept hashed and cannot be shown again.',
              '',
            ].join('\n'),
          );
        }
      } finally {
        await db.destroy();
      }
    });
}
