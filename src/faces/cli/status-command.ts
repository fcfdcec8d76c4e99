import type { Command } from 'commander';
import type { Runtime } from '../../platform/runtime/runtime.ts';
import type { PayDateExceptionResource } from '../../platform/pay-date-exceptions/pay-date-exceptions.ts';
import type { PayrollReadiness } from '../../cycle/nightly/go-live-readiness-service.ts';
import { HEARTBEAT_TTL_MS, listLiveWorkers, type WorkerHeartbeat } from '../workers/worker-heartbeat.ts';
import { attentionSummary, formatAge, type AttentionKind, type AttentionList, type AttentionUrgency } from '../attention/attention.ts';

const JOB_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;
/** More than a screenful of broken endpoints is a different problem; the count says so. */
const ENDPOINTS_SHOWN = 50;
const NIGHTLY_RUNS_SHOWN = 5;
const PAY_DATE_EXCEPTIONS_SHOWN = 50;

export interface NightlyRunStatus {
  id: string;
  runDate: string;
  trigger: string;
  triggeredBy: string | null;
  startedAt: string;
  finishedAt: string | null;
  payDates: number;
  locked: number;
  alreadyLocked: number;
  failed: number;
  /** Held back: their payroll was not ready (see notReadyPayrolls). */
  skipped: number;
  pending: number;
}

/** One item of the attention list as the command prints it, with the console address where it is resolved. */
export interface StatusAttentionItem {
  kind: AttentionKind;
  urgency: AttentionUrgency;
  what: string;
  since: string;
  age: string;
  url: string;
  command: string | null;
}

export interface StatusReport {
  /** What needs an operator now, urgent first: the console overview's list. `--check` fails while it is not empty. */
  attention: { summary: string; counts: Record<AttentionKind, number>; items: StatusAttentionItem[] };
  /** Worker processes whose heartbeat has not expired; none means no job is being worked. */
  workers: WorkerHeartbeat[];
  /** The latest nightly run, or null before the first; `finishedAt` null while it is unfinished. */
  lastNightlyRun: NightlyRunStatus | null;
  /** When NIGHTLY_CRON next fires in SERVICE_TIME_ZONE; null if the pattern never fires again. */
  nextNightlyRunAt: string | null;
  timeZone: string;
  queues: Array<{ name: string } & Record<(typeof JOB_STATES)[number], number>>;
  /** The latest nightly runs as the database recorded them, newest first. */
  nightlyRuns: NightlyRunStatus[];
  /** Pay dates that work over many pay dates left as they were while the others went on. */
  payDateExceptions: PayDateExceptionResource[];
  /** Live payrolls the nightly run cannot lock as they are (go-live date, collection account, opt-in, calendar), each with what is missing. */
  notReadyPayrolls: PayrollReadiness[];
  webhooks: {
    undispatchedEvents: number;
    pendingDeliveries: number;
    troubledEndpoints: Array<{
      id: string;
      biller: string;
      url: string;
      status: 'enabled' | 'disabled';
      disabledReason: string | null;
      failingSince: string | null;
      pendingDeliveries: number;
    }>;
  };
}

export async function collectStatus(runtime: Runtime, now = new Date()): Promise<StatusReport> {
  const { listRecentRuns } = await import('../../cycle/nightly/nightly-run-repository.ts');
  const { producerConnection } = await import('../../platform/runtime/redis-connections.ts');
  const { queueNames } = await import('../../platform/queue/job-catalogue.ts');
  const { createQueue } = await import('../../platform/queue/queues.ts');
  const { listTroubledEndpoints, outboxBacklog } = await import('../webhooks/webhook-repository.ts');
  const { nextNightlyRunAt } = await import('../../cycle/nightly/next-nightly-run.ts');
  const { listPayDateExceptions } = await import('../../platform/pay-date-exceptions/pay-date-exceptions.ts');
  const { listPayrollReadiness } = await import('../../cycle/nightly/go-live-readiness-service.ts');
  const { collectAttention } = await import('../attention/attention-service.ts');
  const { config, db } = runtime;
  const connection = producerConnection(config);
  const queues = Object.values(queueNames).map((name) => createQueue(name, connection, config.QUEUE_PREFIX));
  try {
    const [workers, counts, backlog, endpoints, runs, payDateExceptions, readiness, attention] = await Promise.all([
      listLiveWorkers(runtime.redis, config.QUEUE_PREFIX),
      Promise.all(queues.map(async (queue) => ({ name: queue.name, counts: await queue.getJobCounts(...JOB_STATES) }))),
      outboxBacklog(db),
      listTroubledEndpoints(db, ENDPOINTS_SHOWN),
      listRecentRuns(db, NIGHTLY_RUNS_SHOWN),
      listPayDateExceptions(db, PAY_DATE_EXCEPTIONS_SHOWN),
      listPayrollReadiness(db, { now, timeZone: config.SERVICE_TIME_ZONE }),
      collectAttention(
        {
          db,
          workers: { redis: runtime.redis, prefix: config.QUEUE_PREFIX },
          queues: async () => queues,
          nightlyCron: config.NIGHTLY_CRON,
          timeZone: config.SERVICE_TIME_ZONE,
        },
        now,
      ),
    ]);
    const nightlyRuns = runs.map((run) => ({
      id: run.id,
      runDate: run.run_date,
      trigger: run.trigger,
      triggeredBy: run.triggered_by,
      startedAt: run.started_at.toISOString(),
      finishedAt: run.finished_at ? run.finished_at.toISOString() : null,
      payDates: run.pay_dates,
      locked: run.locked,
      alreadyLocked: run.already_locked,
      failed: run.failed,
      skipped: run.skipped,
      pending: run.pending,
    }));
    return {
      attention: statusAttention(attention, config.PUBLIC_BASE_URL, now),
      workers,
      lastNightlyRun: nightlyRuns[0] ?? null,
      nextNightlyRunAt: nextNightlyRunAt(config.NIGHTLY_CRON, config.SERVICE_TIME_ZONE, now)?.toISOString() ?? null,
      timeZone: config.SERVICE_TIME_ZONE,
      queues: counts.map(({ name, counts: byState }) => ({
        name,
        waiting: byState.waiting ?? 0,
        active: byState.active ?? 0,
        delayed: byState.delayed ?? 0,
        failed: byState.failed ?? 0,
      })),
      nightlyRuns,
      payDateExceptions,
      notReadyPayrolls: readiness.filter((payroll) => !payroll.ready),
      webhooks: {
        ...backlog,
        troubledEndpoints: endpoints.map((endpoint) => ({
          id: endpoint.id,
          biller: endpoint.biller_name,
          url: endpoint.url,
          status: endpoint.status,
          disabledReason: endpoint.disabled_reason,
          failingSince: endpoint.failing_since ? endpoint.failing_since.toISOString() : null,
          pendingDeliveries: Number(endpoint.pending_deliveries ?? 0),
        })),
      },
    };
  } finally {
    await Promise.all(queues.map((queue) => queue.close()));
  }
}

function statusAttention(list: AttentionList, baseUrl: string, now: Date): StatusReport['attention'] {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    summary: attentionSummary(list),
    counts: list.counts,
    items: list.items.map((item) => ({
      kind: item.kind,
      urgency: item.urgency,
      what: item.what,
      since: item.since.toISOString(),
      age: formatAge(item.since, now),
      url: `${base}${item.href}`,
      command: item.command ?? null,
    })),
  };
}

/** The attention list as the first thing the command prints: what, how old, where to resolve it. */
export function formatAttention(attention: StatusReport['attention']): string[] {
  const lines = [attention.summary];
  const listed = new Map<AttentionKind, number>();
  for (const item of attention.items) {
    listed.set(item.kind, (listed.get(item.kind) ?? 0) + 1);
    lines.push(`  ${item.urgency === 'urgent' ? 'URGENT ' : ''}${item.what} (${item.age})`);
    lines.push(`    ${item.url}${item.command ? `  or: ${item.command}` : ''}`);
  }
  for (const [kind, count] of Object.entries(attention.counts) as Array<[AttentionKind, number]>) {
    const more = count - (listed.get(kind) ?? 0);
    if (more > 0) lines.push(`  … and ${more} more ${kind.replaceAll('_', ' ')} not listed`);
  }
  return lines;
}

export function formatStatus(report: StatusReport): string {
  const width = Math.max(...report.queues.map((queue) => queue.name.length));
  const lines = [...formatAttention(report.attention), 'Workers'];
  if (report.workers.length === 0) lines.push(`  NO WORKER ALIVE: no heartbeat in the last ${HEARTBEAT_TTL_MS / 1000} s, so no job is being worked`);
  for (const worker of report.workers) {
    lines.push(`  ${worker.host} pid ${worker.pid}, started ${worker.started_at}, last seen ${worker.last_seen}`);
  }
  const last = report.lastNightlyRun;
  const lastState = !last
    ? 'none yet'
    : last.finishedAt === null
      ? `${last.runDate} (${last.trigger}), unfinished: started ${last.startedAt}`
      : `${last.runDate} (${last.trigger}), finished ${last.finishedAt}: ${last.payDates} due, ${last.locked} locked, ${last.failed} failed, ${last.skipped} skipped`;
  lines.push(`Last nightly run: ${lastState}`);
  const due =
    report.nextNightlyRunAt === null ? 'never (NIGHTLY_CRON does not fire again)' : `${report.nextNightlyRunAt} (${localTime(report.nextNightlyRunAt, report.timeZone)})`;
  lines.push(`Next nightly run due: ${due}`);
  lines.push('Queues (waiting / active / delayed / failed)');
  for (const queue of report.queues) {
    lines.push(`  ${queue.name.padEnd(width)}  ${queue.waiting} / ${queue.active} / ${queue.delayed} / ${queue.failed}`);
  }
  lines.push('Nightly runs (latest first)');
  if (report.nightlyRuns.length === 0) lines.push('  none yet');
  for (const run of report.nightlyRuns) {
    const by = run.triggeredBy ? ` by ${run.triggeredBy}` : '';
    const state =
      run.finishedAt === null
        ? `running, ${run.pending} of ${run.payDates} pay dates pending`
        : `finished in ${((Date.parse(run.finishedAt) - Date.parse(run.startedAt)) / 1000).toFixed(1)} s`;
    lines.push(`  ${run.runDate}  ${run.trigger}${by}, started ${run.startedAt}, ${state}`);
    lines.push(`    ${run.payDates} due: ${run.locked} locked, ${run.alreadyLocked} already locked, ${run.failed} failed, ${run.skipped} skipped (payroll not ready)`);
  }
  lines.push('Payrolls not ready (the nightly run skips their pay dates; deductions payrolls readiness)');
  if (report.notReadyPayrolls.length === 0) lines.push('  none');
  for (const payroll of report.notReadyPayrolls) {
    lines.push(`  ${payroll.employer}, payroll ${payroll.payroll} (${payroll.payrollId})`);
    for (const finding of payroll.findings.filter((f) => f.severity === 'missing')) lines.push(`    missing: ${finding.message}`);
  }
  lines.push('Pay dates left behind (exceptions)');
  if (report.payDateExceptions.length === 0) lines.push('  none');
  for (const exception of report.payDateExceptions) {
    lines.push(`  ${exception.employer}, payroll ${exception.payroll} (${exception.payroll_id}), pay date ${exception.pay_date}: ${exception.stage}`);
    lines.push(`    ${exception.detail}; seen ${exception.occurrences} time(s) since ${exception.first_seen_at}`);
  }
  const { webhooks } = report;
  lines.push('Webhooks', `  events not yet dispatched  ${webhooks.undispatchedEvents}`, `  deliveries pending         ${webhooks.pendingDeliveries}`);
  if (webhooks.troubledEndpoints.length === 0) {
    lines.push('  no failing or disabled endpoints');
  } else {
    lines.push('  Failing or disabled endpoints');
    for (const endpoint of webhooks.troubledEndpoints) {
      const state = endpoint.status === 'disabled' ? `DISABLED: ${endpoint.disabledReason ?? 'no reason recorded'}` : `failing since ${endpoint.failingSince}`;
      lines.push(`    ${endpoint.id}  ${endpoint.biller}  ${endpoint.url}`);
      lines.push(`      ${state}; ${endpoint.pendingDeliveries} deliveries pending`);
    }
  }
  return lines.join('\n');
}

function localTime(instant: string, timeZone: string): string {
  const local = new Intl.DateTimeFormat('en-CA', { timeZone, dateStyle: 'short', timeStyle: 'short', hourCycle: 'h23' }).format(new Date(instant));
  return `${local.replace(',', '')} ${timeZone}`;
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'Show what needs attention, then live workers, the last and next nightly run, queue counts, pay dates left behind as exceptions, the webhook backlog and failing or disabled webhook endpoints',
    )
    .option('--json', 'print as JSON')
    .option('--check', 'exit non-zero while anything needs attention, a dead worker included (for monitoring)')
    .action(async (options: { json?: boolean; check?: boolean }) => {
      const { loadConfig } = await import('../../platform/config/config.ts');
      const { openRuntime } = await import('../../platform/runtime/runtime.ts');
      const runtime = await openRuntime({ ...loadConfig(), LOG_LEVEL: 'warn' }, 'status');
      try {
        const report = await collectStatus(runtime);
        process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatStatus(report)}\n`);
        if (options.check && report.attention.items.length > 0) {
          process.stderr.write(`${report.attention.summary}\n`);
          process.exitCode = 1;
        }
      } finally {
        await runtime.close();
      }
    });
}
