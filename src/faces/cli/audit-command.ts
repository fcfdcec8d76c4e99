import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { auditTrail } from '../../platform/audit/audit-service.ts';

type AuditRow = Awaited<ReturnType<typeof auditTrail>>[number];

export function formatAuditLine(row: AuditRow): string {
  const who = row.actor_kind === 'client' ? `client ${row.actor}` : row.actor_kind === 'console' ? `${row.actor} (console)` : row.actor;
  const why = row.reason === null ? '' : `: ${row.reason}`;
  return `${row.at.toISOString()}  ${row.action}  ${row.resource_type} ${row.resource_id}  by ${who}${why}`;
}

function parseLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 10_000) throw new InvalidArgumentError('expected a whole number from 1 to 10000');
  return limit;
}

export function registerAuditCommand(program: Command): void {
  program
    .command('audit')
    .description('Who did which money or credential action, when and why (payouts marked, re-runs, beneficiary accounts, clients); newest first')
    .option('--resource <id>', 'only actions on this payout, re-run, biller or client id')
    .option('--action <name>', 'only this action, e.g. payout.marked_failed')
    .option('--limit <n>', 'at most this many (default 50)', parseLimit, 50)
    .option('--json', 'print as JSON, with the before and after summaries')
    .action(async (options: { resource?: string; action?: string; limit: number; json?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { createDatabase } = await import('../../platform/db/connection.ts');
      const db = createDatabase(loadConfig().DATABASE_URL, 1);
      try {
        const rows = await auditTrail(db, { resourceId: options.resource?.toLowerCase(), action: options.action, limit: options.limit });
        process.stdout.write(options.json ? `${JSON.stringify(rows, null, 2)}\n` : rows.map((row) => `${formatAuditLine(row)}\n`).join(''));
      } finally {
        await db.destroy();
      }
    });
}
