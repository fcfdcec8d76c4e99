import type { Command } from 'commander';
import type { Database } from '../../platform/db/connection.ts';
import { secretBoxFor, type SecretBox } from '../../platform/shared/secret-box.ts';

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
  const { resealWebhookSecrets } = await import('../webhooks/webhook-endpoint-service.ts');
  const { resealProviderClientSecrets } = await import('../../directory/payroll-providers/provider-credentials.ts');
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
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { createDatabase } = await import('../../platform/db/connection.ts');
      const config = loadConfig();
      const db = createDatabase(config.DATABASE_URL, 1);
      try {
        process.stdout.write(`${formatResealSummary(await sealStoredSecrets(db, secretBoxFor(config)))}\n`);
      } finally {
        await db.destroy();
      }
    });
}
