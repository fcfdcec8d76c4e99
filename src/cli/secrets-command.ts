import type { Command } from 'commander';
import { loadConfig } from '../config/config.ts';
import { createDatabase, type Database } from '../db/connection.ts';
import { resealProviderClientSecrets } from '../payroll-providers/provider-credentials.ts';
import { secretBoxFor, type SecretBox } from '../shared/secret-box.ts';
import { resealWebhookSecrets } from '../webhooks/webhook-endpoint-service.ts';

export interface ResealSummary {
  keyId: string;
  webhookEndpoints: number;
  payrollProviders: number;
}

/**
 * Every stored secret under the current master key, one transaction per table: plain text sealed,
 * earlier keys' values re-wrapped. Safe to run any number of times; `deductions migrate` runs it.
 */
export async function sealStoredSecrets(db: Database, secrets: SecretBox): Promise<ResealSummary> {
  const webhookEndpoints = await db.transaction().execute((trx) => resealWebhookSecrets(trx, secrets));
  const payrollProviders = await db.transaction().execute((trx) => resealProviderClientSecrets(trx, secrets));
  return { keyId: secrets.currentKeyId, webhookEndpoints, payrollProviders };
}

export function formatResealSummary(summary: ResealSummary): string {
  return `Stored secrets are sealed with master key ${summary.keyId} (changed now: ${summary.webhookEndpoints} webhook endpoints, ${summary.payrollProviders} payroll providers)`;
}

export function registerSecretsCommands(program: Command): void {
  const secrets = program.command('secrets').description('Stored secrets (webhook signing secrets, payroll providers’ client secrets)');
  secrets
    .command('encrypt')
    .description('Seal plain-text stored secrets and re-wrap those sealed under SECRETS_PREVIOUS_KEYS with SECRETS_KEY (idempotent)')
    .action(async () => {
      const config = loadConfig();
      const db = createDatabase(config.DATABASE_URL, 1);
      try {
        process.stdout.write(`${formatResealSummary(await sealStoredSecrets(db, secretBoxFor(config)))}\n`);
      } finally {
        await db.destroy();
      }
    });
}
