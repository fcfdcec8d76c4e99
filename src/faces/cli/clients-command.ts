import { Command, Option } from 'commander';
import { cliActor } from '../../platform/audit/audit-service.ts';
import type { ClientResource } from '../../directory/auth/client-resource.ts';
import type { ClientChange } from '../../directory/auth/clients-service.ts';
import { CLIENT_CACHE_TTL_MS } from '../../directory/auth/revocation.ts';
import { scopes, scopeSchema, type Scope } from '../../directory/auth/scopes.ts';
import type { Database } from '../../platform/db/connection.ts';
import type { ClientRole } from '../../platform/db/tables.ts';
import { MAX_PAGE_SIZE } from '../../platform/shared/paging.ts';
import { withDatabase } from './command-database.ts';
import { operatorName, parseUuidOption } from './options.ts';

function parseScopes(value: string): Scope[] {
  return value
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((scope) => scopeSchema.parse(scope));
}

export function formatClientLine(client: ClientResource): string {
  const state = client.disabled_at ? `disabled since ${client.disabled_at}` : 'enabled';
  const keys = client.api_keys.map((key) => `${key.key_prefix}...`).join(' ') || 'no API key';
  return `${client.id}  ${client.role.padEnd(16)} ${state.padEnd(40)} secret v${client.secret_version}  ${keys}  ${client.name}`;
}

const takesEffect = `Takes effect on every API process within ${CLIENT_CACHE_TTL_MS / 1000} s.`;

export function registerClientCommands(program: Command): void {
  const clients = program.command('clients').description('Manage API clients');
  clients
    .command('create')
    .description('Create a client and print its id, secret and API key (shown this once only)')
    .requiredOption('--name <name>', 'display name')
    .addOption(new Option('--role <role>', 'client role').choices(['biller', 'payroll_provider', 'operator']).makeOptionMandatory())
    .option('--scopes <scopes>', `space- or comma-separated scopes (default: the role's); known: ${scopes.join(' ')}`, parseScopes)
    .option('--payroll-provider <id>', 'payroll provider this client acts for (role payroll_provider)', parseUuidOption)
    .option('--by <name>', 'who creates it (default: the OS user)')
    .option('--json', 'print the client as JSON, with its client_secret and api_key')
    .action(async (options: { name: string; role: ClientRole; scopes?: Scope[]; payrollProvider?: string; by?: string; json?: boolean }) => {
      if ((options.role === 'payroll_provider') !== Boolean(options.payrollProvider)) {
        program.error('--payroll-provider is required for, and only for, role payroll_provider');
      }
      const { createClient, getClientResource } = await import('../../directory/auth/clients-service.ts');
      await withDatabase(async (db) => {
        const { issued, client } = await db.transaction().execute(async (trx) => {
          const credentials = await createClient(
            trx,
            {
              name: options.name,
              role: options.role,
              ...(options.scopes ? { scopes: options.scopes } : {}),
              payrollProviderId: options.payrollProvider ?? null,
            },
            cliActor(operatorName(options.by)),
          );
          return { issued: credentials, client: await getClientResource(trx, credentials.clientId) };
        });
        if (options.json) {
          process.stdout.write(`${JSON.stringify({ ...client, client_secret: issued.clientSecret, api_key: issued.apiKey }, null, 2)}\n`);
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
      });
    });

  clients
    .command('show')
    .description('One client: id, role, scopes, enabled or disabled, secret version, API key prefixes (never a secret)')
    .requiredOption('--client <id>', 'client id', parseUuidOption)
    .option('--json', 'print as JSON')
    .action(async (options: { client: string; json?: boolean }) => {
      const { getClientResource } = await import('../../directory/auth/clients-service.ts');
      await withDatabase(async (db) => {
        const client = await getClientResource(db, options.client);
        process.stdout.write(options.json ? `${JSON.stringify(client, null, 2)}\n` : `${formatClientLine(client)}\n  scopes: ${client.scopes.join(' ')}\n`);
      });
    });

  clients
    .command('list')
    .description('Every client: id, role, enabled or disabled, secret version, API key prefixes, name')
    .option('--json', 'print as JSON')
    .action(async (options: { json?: boolean }) => {
      const { listClientResources } = await import('../../directory/auth/clients-service.ts');
      await withDatabase(async (db) => {
        const all: ClientResource[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await listClientResources(db, { limit: MAX_PAGE_SIZE, ...(after ? { after } : {}) });
          all.push(...page.clients);
          if (!page.paging.after) break;
          after = page.paging.after;
        }
        process.stdout.write(options.json ? `${JSON.stringify({ clients: all }, null, 2)}\n` : all.map((client) => `${formatClientLine(client)}\n`).join(''));
      });
    });

  const changeCommand = (name: string, description: string, run: (db: Database, clientId: string, change: ClientChange) => Promise<string>) =>
    clients
      .command(name)
      .description(description)
      .requiredOption('--client <id>', 'client id', parseUuidOption)
      .requiredOption('--reason <text>', 'why (kept in the audit log)')
      .option('--by <name>', 'who makes the change (default: the OS user)')
      .action(async (options: { client: string; reason: string; by?: string }) => {
        if (options.reason.trim() === '') {
          process.stderr.write('--reason must not be empty\n');
          process.exitCode = 2;
          return;
        }
        await withDatabase(async (db) => {
          const output = await run(db, options.client, { actor: cliActor(operatorName(options.by)), reason: options.reason });
          process.stdout.write(output);
        });
      });

  changeCommand('disable', `Disable a client: its tokens and API keys stop working and it gets no new token. ${takesEffect}`, async (db, id, change) => {
    const { disableClient } = await import('../../directory/auth/clients-service.ts');
    const client = await db.transaction().execute((trx) => disableClient(trx, id, change));
    return `${formatClientLine(client)}\n`;
  });

  changeCommand('enable', 'Enable a disabled client again', async (db, id, change) => {
    const { enableClient } = await import('../../directory/auth/clients-service.ts');
    const client = await db.transaction().execute((trx) => enableClient(trx, id, change));
    return `${formatClientLine(client)}\n`;
  });

  changeCommand('rotate-secret', `Issue a new client secret (shown once); the old one and its tokens stop working. ${takesEffect}`, async (db, id, change) => {
    const { rotateClientSecret } = await import('../../directory/auth/clients-service.ts');
    const { client, clientSecret } = await db.transaction().execute((trx) => rotateClientSecret(trx, id, change));
    return [formatClientLine(client), `client_secret: ${clientSecret}`, '', 'Store the secret now: it is kept hashed and cannot be shown again.', ''].join('\n');
  });

  changeCommand('rotate-api-key', `Issue a new API key (shown once); every older key stops working. ${takesEffect}`, async (db, id, change) => {
    const { rotateClientApiKey } = await import('../../directory/auth/clients-service.ts');
    const { client, apiKey } = await db.transaction().execute((trx) => rotateClientApiKey(trx, id, change));
    return [formatClientLine(client), `api_key: ${apiKey}`, '', 'Store the key now: it is kept hashed and cannot be shown again.', ''].join('\n');
  });
}
