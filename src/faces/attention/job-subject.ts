import {
  deliverWebhookJob,
  dispatchEventsJob,
  lockPayDateJob,
  nightlyTriggerJob,
  purgeIdempotencyKeysJob,
  reconcilePayDateJob,
  reconcileSweepJob,
  rerunPayDateJob,
  runPayoutsJob,
} from '../../platform/queue/job-catalogue.ts';

// A failed job's id (`lock.<uuid>.<uuid>.<date>`) and payload are for machines; an operator reads
// what it was for, by name. The payload is read leniently: a failed job may be one whose payload the
// catalogue refused, and it must still be listed.

/** The names behind the ids of many jobs' payloads, looked up together. */
export interface JobSubjectNames {
  /** Payrolls as people name them (payrollName). */
  payrolls: ReadonlyMap<string, string>;
  reruns: Map<string, { payroll_id: string; pay_date: string }>;
  deliveries: Map<string, { biller: string; url: string; event_type: string }>;
}

/** The ids a job's payload names, to look their names up in one go. */
export interface JobSubjectIds {
  payrollId?: string;
  payDate?: string;
  rerunId?: string;
  deliveryId?: string;
  date?: string;
}

const stringField = (data: unknown, field: string): string | undefined => {
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const uuidField = (data: unknown, field: string): string | undefined => {
  const value = stringField(data, field);
  return value !== undefined && UUID.test(value) ? value : undefined;
};

/** The ids and dates a payload names; an id that is no UUID is left out (it names nothing to look up). */
export function jobSubjectIds(data: unknown): JobSubjectIds {
  const found: Array<[keyof JobSubjectIds, string | undefined]> = [
    ['payrollId', uuidField(data, 'payrollId')],
    ['payDate', stringField(data, 'payDate')],
    ['rerunId', uuidField(data, 'rerunId')],
    ['deliveryId', uuidField(data, 'deliveryId')],
    ['date', stringField(data, 'date') ?? stringField(data, 'runDate')],
  ];
  return Object.fromEntries(found.filter(([, value]) => value !== undefined)) as JobSubjectIds;
}

/** The ids to look names up for, over many jobs' payloads, each once. */
export function jobSubjectIdSets(payloads: readonly unknown[]): { payrollIds: string[]; rerunIds: string[]; deliveryIds: string[] } {
  const subjects = payloads.map(jobSubjectIds);
  const each = (key: 'payrollId' | 'rerunId' | 'deliveryId') => [...new Set(subjects.flatMap((subject) => (subject[key] === undefined ? [] : [subject[key]])))];
  return { payrollIds: each('payrollId'), rerunIds: each('rerunId'), deliveryIds: each('deliveryId') };
}

/** What a job was for, in names where the payload names something, else in its own words. */
export function describeJob(name: string, data: unknown, names: JobSubjectNames): string {
  const ids = jobSubjectIds(data);
  const rerun = ids.rerunId === undefined ? undefined : names.reruns.get(ids.rerunId);
  const payrollId = ids.payrollId ?? rerun?.payroll_id;
  const payDate = ids.payDate ?? rerun?.pay_date;
  const payroll = payrollId === undefined ? undefined : names.payrolls.get(payrollId);
  const payrollText = payroll ?? (payrollId !== undefined ? `payroll ${payrollId}` : 'a payroll');
  const ofPayDate = `${payrollText}${payDate !== undefined ? `, pay date ${payDate}` : ''}`;
  switch (name) {
    case lockPayDateJob:
      return `lock of ${ofPayDate}`;
    case rerunPayDateJob:
      return rerun ? `re-run of ${ofPayDate}` : `re-run ${ids.rerunId ?? ''}`.trim();
    case reconcilePayDateJob:
      return `reconciliation of ${ofPayDate}`;
    case nightlyTriggerJob:
      return ids.date !== undefined ? `start of the nightly run of ${ids.date}` : 'start of the nightly run';
    case reconcileSweepJob:
      return ids.date !== undefined ? `reconciliation sweep of ${ids.date}` : 'reconciliation sweep';
    case runPayoutsJob:
      return ids.date !== undefined ? `payout run of ${ids.date}` : 'payout run';
    case deliverWebhookJob: {
      const delivery = ids.deliveryId === undefined ? undefined : names.deliveries.get(ids.deliveryId);
      return delivery ? `delivery of ${delivery.event_type} to ${delivery.biller} (${delivery.url})` : `webhook delivery ${ids.deliveryId ?? ''}`.trim();
    }
    case dispatchEventsJob:
      return 'dispatch of webhook events';
    case purgeIdempotencyKeysJob:
      return 'purge of old idempotency keys';
    default:
      return name;
  }
}
