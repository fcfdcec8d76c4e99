import { formatMoney } from '../../platform/money/money-text.ts';
import { z } from 'zod';
import type { Executor } from '../../platform/db/connection.ts';
import { findRun } from '../nightly/nightly-run-repository.ts';
import { payrollName } from '../../directory/payrolls/payroll-names.ts';
import { NotFoundError } from '../../platform/shared/domain-errors.ts';
import { isUuid } from '../../platform/shared/schemas.ts';
import {
  findPayoutRun,
  findReconciliationRun,
  findRerun,
  listNightlyRunPayDates,
  listNightlyRuns,
  listPayoutRuns,
  listPayoutsByIds,
  listReconciliationRuns,
  listRerunRequests,
  listReruns,
} from './run-history-repository.ts';

export const runKindSchema = z.enum(['nightly', 'rerun', 'reconciliation', 'payout']);
export type RunKind = z.infer<typeof runKindSchema>;

export const runHistoryEntrySchema = z
  .object({
    kind: runKindSchema,
    id: z.string(),
    startedAt: z.string(),
    finishedAt: z.string().nullable().meta({ description: 'Null while the run is unfinished: still working, or killed before it could finish.' }),
    outcome: z.enum(['completed', 'failed', 'unfinished']).meta({ description: 'completed or failed once finished; unfinished until then.' }),
    summary: z.string().meta({ description: 'What it ran on and what came of it, in one line, naming payrolls as "Employer: Payroll".' }),
    payrollId: z.string().optional().meta({ description: 'The payroll a re-run or reconciliation run worked on (the summary names it); absent for nightly and payout runs.' }),
  })
  .meta({
    id: 'RunHistoryEntry',
    description: 'One nightly run, re-run, reconciliation run or payout run, as the database recorded it.',
    example: {
      kind: 'reconciliation',
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
      startedAt: '2026-11-30T05:00:02.118Z',
      finishedAt: '2026-11-30T05:00:02.431Z',
      outcome: 'completed',
      summary: 'Acme Manufacturing Ltd: Monthly staff, pay date 2026-11-27 (sweep, final): 120 employees, collected £15,200.00, 2 exceptions',
      payrollId: '019a7b2c-0000-7000-8000-000000000001',
    },
  });
export type RunHistoryEntry = z.infer<typeof runHistoryEntrySchema>;

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

function totalsText(totals: unknown): string {
  const entries = Object.entries((totals ?? {}) as Record<string, number>);
  return entries.length === 0 ? 'nothing paid out' : entries.map(([currency, amount]) => formatMoney(amount, currency)).join(', ');
}

/** Newest first, across the kinds asked for (all by default); `limit` entries at most. */
export async function listRuns(db: Executor, options: { kind?: RunKind; limit: number }): Promise<RunHistoryEntry[]> {
  const wanted = (kind: RunKind) => options.kind === undefined || options.kind === kind;
  const entries: RunHistoryEntry[] = [];
  if (wanted('nightly')) {
    for (const run of await listNightlyRuns(db, options.limit)) {
      entries.push({
        kind: 'nightly',
        id: run.id,
        startedAt: run.started_at.toISOString(),
        finishedAt: iso(run.finished_at),
        outcome: run.finished_at === null ? 'unfinished' : run.failed > 0 ? 'failed' : 'completed',
        summary: `run date ${run.run_date} (${run.trigger}${run.triggered_by ? ` by ${run.triggered_by}` : ''}): ${run.pay_dates_due} due, ${run.locked} locked, ${run.already_locked} already locked, ${run.failed} failed, ${run.skipped} skipped (payroll not ready), ${run.pending} pending`,
      });
    }
  }
  if (wanted('rerun')) {
    for (const rerun of await listReruns(db, options.limit)) {
      entries.push({
        kind: 'rerun',
        id: rerun.id,
        startedAt: rerun.requested_at.toISOString(),
        finishedAt: iso(rerun.completed_at),
        outcome: rerun.completed_at === null ? 'unfinished' : 'completed',
        summary: `${payrollName(rerun)}, pay date ${rerun.pay_date}: ${rerun.requests} request(s), snapshot version ${rerun.previous_snapshot_version ?? 'none'} -> ${rerun.new_snapshot_version ?? 'pending'}`,
        payrollId: rerun.payroll_id,
      });
    }
  }
  if (wanted('reconciliation')) {
    for (const run of await listReconciliationRuns(db, options.limit)) {
      const figures =
        run.outcome === 'completed'
          ? `${run.employees} employees, collected ${formatMoney(run.collected ?? 0, run.currency)}, ${run.exceptions} exceptions`
          : run.outcome === 'failed'
            ? `failed: ${run.failure_reason}`
            : 'unfinished';
      entries.push({
        kind: 'reconciliation',
        id: run.id,
        startedAt: run.started_at.toISOString(),
        finishedAt: iso(run.finished_at),
        outcome: run.outcome ?? 'unfinished',
        summary: `${payrollName(run)}, pay date ${run.pay_date} (${run.trigger}${run.final ? ', final' : ''}): ${figures}`,
        payrollId: run.payroll_id,
      });
    }
  }
  if (wanted('payout')) {
    for (const run of await listPayoutRuns(db, options.limit)) {
      const figures =
        run.outcome === null
          ? 'unfinished'
          : `${run.payouts_made} payouts, ${totalsText(run.totals_by_currency)}, ${run.failed_groups} failed groups${run.outcome === 'failed' ? `: ${run.failure_reason}` : ''}`;
      entries.push({
        kind: 'payout',
        id: run.id,
        startedAt: run.started_at.toISOString(),
        finishedAt: iso(run.finished_at),
        outcome: run.outcome ?? 'unfinished',
        summary: `run date ${run.run_date} (${run.trigger}${run.triggered_by ? ` by ${run.triggered_by}` : ''}), settled through ${run.settled_through}: ${figures}`,
      });
    }
  }
  return entries.sort((a, b) => b.startedAt.localeCompare(a.startedAt) || b.id.localeCompare(a.id)).slice(0, options.limit);
}

/** One run with what it worked on: a nightly run's pay dates, a re-run's requests, a payout run's payouts. */
export async function showRun(db: Executor, kind: RunKind, runId: string): Promise<Record<string, unknown> & { kind: RunKind; id: string }> {
  const notFound = new NotFoundError(`Run ${kind} ${runId}`);
  if (!isUuid(runId)) throw notFound;
  switch (kind) {
    case 'nightly': {
      const run = await findRun(db, runId);
      if (!run) throw notFound;
      return { kind, ...run, payDates: await listNightlyRunPayDates(db, runId) };
    }
    case 'rerun': {
      const rerun = await findRerun(db, runId);
      if (!rerun) throw notFound;
      return { kind, ...rerun, requests: await listRerunRequests(db, runId) };
    }
    case 'reconciliation': {
      const run = await findReconciliationRun(db, runId);
      if (!run) throw notFound;
      return { kind, ...run };
    }
    case 'payout': {
      const run = await findPayoutRun(db, runId);
      if (!run) throw notFound;
      const groups = (run.groups ?? []) as Array<{ outcome: string; payoutId?: string }>;
      const payoutIds = groups.flatMap((group) => (group.outcome === 'paid_out' && group.payoutId ? [group.payoutId] : []));
      return { kind, ...run, payouts: await listPayoutsByIds(db, payoutIds) };
    }
  }
}
