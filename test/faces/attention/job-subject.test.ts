import { describe, expect, it } from 'vitest';
import { describeJob, jobSubjectIdSets, jobSubjectIds, type JobSubjectNames } from '../../../src/faces/attention/job-subject.ts';

const PAYROLL = '11111111-1111-4111-8111-111111111111';
const RERUN = '22222222-2222-4222-8222-222222222222';
const DELIVERY = '33333333-3333-4333-8333-333333333333';
const names: JobSubjectNames = {
  payrolls: new Map([[PAYROLL, 'Acme Ltd: Monthly']]),
  reruns: new Map([[RERUN, { payroll_id: PAYROLL, pay_date: '2026-10-30' }]]),
  deliveries: new Map([[DELIVERY, { biller: 'Acme Lending', url: 'https://hooks.example/acme', event_type: 'payment_request.updated' }]]),
};
const none: JobSubjectNames = { payrolls: new Map(), reruns: new Map(), deliveries: new Map() };

describe('describeJob', () => {
  it.each([
    ['lock-pay-date', { runId: 'r', payrollId: PAYROLL, payDate: '2026-11-30' }, 'lock of Acme Ltd: Monthly, pay date 2026-11-30'],
    ['reconcile-pay-date', { payrollId: PAYROLL, payDate: '2026-10-30', final: true }, 'reconciliation of Acme Ltd: Monthly, pay date 2026-10-30'],
    ['rerun-pay-date', { rerunId: RERUN }, 're-run of Acme Ltd: Monthly, pay date 2026-10-30'],
    ['deliver-webhook', { deliveryId: DELIVERY }, 'delivery of payment_request.updated to Acme Lending (https://hooks.example/acme)'],
    ['nightly-trigger', { runDate: '2026-11-28', trigger: 'catch_up' }, 'start of the nightly run of 2026-11-28'],
    ['nightly-trigger', {}, 'start of the nightly run'],
    ['reconcile-sweep', { runDate: '2026-11-28' }, 'reconciliation sweep of 2026-11-28'],
    ['run-payouts', { date: '2026-11-27' }, 'payout run of 2026-11-27'],
    ['run-payouts', {}, 'payout run'],
    ['dispatch-events', {}, 'dispatch of webhook events'],
    ['purge-idempotency-keys', {}, 'purge of old idempotency keys'],
    ['some-future-job', { x: 1 }, 'some-future-job'],
  ])('%s %j reads “%s”', (name, data, words) => {
    expect(describeJob(name, data, names)).toBe(words);
  });

  it('falls back to the ids when the names are gone, and reads a payload that is not an object', () => {
    expect(describeJob('lock-pay-date', { payrollId: PAYROLL, payDate: '2026-11-30' }, none)).toBe(`lock of payroll ${PAYROLL}, pay date 2026-11-30`);
    expect(describeJob('rerun-pay-date', { rerunId: RERUN }, none)).toBe(`re-run ${RERUN}`);
    expect(describeJob('deliver-webhook', { deliveryId: DELIVERY }, none)).toBe(`webhook delivery ${DELIVERY}`);
    expect(describeJob('lock-pay-date', null, none)).toBe('lock of a payroll');
    expect(describeJob('lock-pay-date', 'not json', names)).toBe('lock of a payroll');
  });
});

describe('jobSubjectIds', () => {
  it('takes only string fields, a run date as the date', () => {
    expect(jobSubjectIds({ payrollId: PAYROLL, payDate: 20261130, runDate: '2026-11-28' })).toEqual({ payrollId: PAYROLL, date: '2026-11-28' });
    expect(jobSubjectIds(undefined)).toEqual({});
    // A payload's id that is no UUID names nothing to look up (and would make the lookup's query fail).
    expect(jobSubjectIds({ payrollId: 'p-1', rerunId: `${RERUN}x`, deliveryId: DELIVERY })).toEqual({ deliveryId: DELIVERY });
  });

  it('collects each id once over many payloads', () => {
    expect(jobSubjectIdSets([{ payrollId: PAYROLL }, { payrollId: PAYROLL, rerunId: RERUN }, { deliveryId: DELIVERY }, 7])).toEqual({
      payrollIds: [PAYROLL],
      rerunIds: [RERUN],
      deliveryIds: [DELIVERY],
    });
  });
});
