import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import type { RunHistoryEntry, RunKind } from '../../cycle/runs/run-history-service.ts';
import { describeReconciliationRunRow, type ReconciliationRunRowFacts } from '../../cycle/reconciliation/reconciliation-run-text.ts';
import { withDatabase } from './command-database.ts';
import { parseUuidOption } from './options.ts';
import { RUN_KINDS } from './vocabulary.ts';

function parseKind(value: string): RunKind {
  if (!(RUN_KINDS as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${RUN_KINDS.join(', ')}`);
  return value as RunKind;
}

function parseRunLimit(value: string): number {
  const limit = Number(value);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1_000) throw new InvalidArgumentError('expected a whole number from 1 to 1000');
  return limit;
}

export function formatRunLine(run: RunHistoryEntry): string {
  return `${run.kind.padEnd(14)}  ${run.id}  ${run.startedAt}  ${run.finishedAt ?? 'unfinished'}  ${run.summary}`;
}

/** Scalars as aligned label/value lines; each list (pay dates, requests, payouts, groups) one compact line per item. */
export function formatRunDetail(run: Record<string, unknown>): string {
  const text = (value: unknown) => (value instanceof Date ? value.toISOString() : value === null ? '-' : typeof value === 'object' ? JSON.stringify(value) : String(value));
  const scalars = Object.entries(run).filter(([, value]) => !Array.isArray(value));
  const lists = Object.entries(run).filter(([, value]) => Array.isArray(value)) as Array<[string, unknown[]]>;
  const width = Math.max(...scalars.map(([label]) => label.length));
  const lines = scalars.map(([label, value]) => `  ${label.padEnd(width)}  ${text(value)}`);
  for (const [label, items] of lists) {
    lines.push(`  ${label} (${items.length}):`);
    for (const item of items) lines.push(`    ${text(item)}`);
  }
  return lines.join('\n');
}

/**
 * A reconciliation run in words, above its columns: what started it (the columns hold a trigger and a
 * queue job id) and what it changed (its `collected` is the pay date's total, whichever run took it in).
 */
export function describeReconciliationRun(run: Record<string, unknown>): string {
  const words = describeReconciliationRunRow(run as unknown as ReconciliationRunRowFacts);
  return [`  What started it: ${words.started}`, `  What it changed: ${words.changed}`].join('\n');
}

export function registerRunsCommands(program: Command): void {
  const runs = program.command('runs').description('Run history: nightly runs, re-runs, reconciliation runs and payout runs, as the database recorded them');

  runs
    .command('list')
    .description('Newest first, one line each: kind, id, started, finished (or "unfinished"), what came of it')
    .option('--kind <kind>', 'only nightly, rerun, reconciliation or payout runs', parseKind)
    .option('--limit <n>', 'at most this many (default 50)', parseRunLimit, 50)
    .option('--json', 'print one JSON object: { "runs": [...] }')
    .action(async (options: { kind?: RunKind; limit: number; json?: boolean }) => {
      const { listRuns } = await import('../../cycle/runs/run-history-service.ts');
      await withDatabase(async (db) => {
        const entries = await listRuns(db, { kind: options.kind, limit: options.limit });
        process.stdout.write(options.json ? `${JSON.stringify({ runs: entries })}\n` : entries.map((run) => `${formatRunLine(run)}\n`).join(''));
      });
    });

  runs
    .command('show')
    .description("One run with what it worked on: a nightly run's pay dates, a re-run's requests, a payout run's payouts")
    .requiredOption('--kind <kind>', 'nightly, rerun, reconciliation or payout', parseKind)
    .requiredOption('--id <id>', 'the run id', parseUuidOption)
    .option('--json', 'print the run as one JSON object')
    .action(async (options: { kind: RunKind; id: string; json?: boolean }) => {
      const { showRun } = await import('../../cycle/runs/run-history-service.ts');
      await withDatabase(async (db) => {
        const run = await showRun(db, options.kind, options.id);
        const words = options.kind === 'reconciliation' ? `${describeReconciliationRun(run)}\n` : '';
        process.stdout.write(options.json ? `${JSON.stringify(run)}\n` : `${words}${formatRunDetail(run)}\n`);
      });
    });
}
