// The integration from start to finish: a biller's first collection by salary deduction.
import type { ApiClient } from './client.ts';
import {
  createMandate,
  createPaymentRequest,
  createSchedule,
  deductibleEmployment,
  deletePaymentRequest,
  deleteWebhookEndpoint,
  fullAvailabilityCheck,
  getMandate,
  getPaymentRequest,
  getSchedule,
  lightAvailabilityCheck,
  newIdempotencyKey,
  registerWebhookEndpoint,
  requestEnablement,
  type Currency,
  type Enablement,
  type FullAvailability,
  type LightAvailability,
  type Mandate,
  type PaymentRequest,
  type Person,
  type Schedule,
} from './biller-api.ts';
import type { HandledEvent, WebhookReceiver } from './webhooks.ts';

export interface WalkthroughOptions {
  api: ApiClient;
  /** The person to collect from, as they gave their details to the biller. */
  person: Person;
  /** What the availability check, the mandate and the payments are in (GBP unless given). */
  currency?: Currency;
  /** Listening already; its URL is registered as a webhook endpoint, and it is given the endpoint's secret. */
  receiver: WebhookReceiver;
  /** The URL the service delivers to, when not the receiver's own (behind a tunnel or a proxy). */
  webhookUrl?: string;
  /** How long to wait for the webhooks of what was made (default 30 s). */
  webhookTimeoutMs?: number;
  /** Leave the webhook endpoint registered at the end (to inspect its deliveries); removed by default. */
  keepWebhookEndpoint?: boolean;
  log?: (line: string) => void;
}

export interface WalkthroughResult {
  webhookEndpointId: string;
  light: LightAvailability;
  full: FullAvailability;
  /** As created (`pending_enablement`). */
  mandate: Mandate;
  enablement: Enablement;
  /** Read back after enablement (`active`). */
  activeMandate: Mandate;
  payment: PaymentRequest;
  /** The same request sent again with its Idempotency-Key: the first answer, replayed. */
  retriedPayment: { payment: PaymentRequest; replayed: boolean };
  schedule: Schedule;
  /** Read back. */
  readBack: { payment: PaymentRequest; schedule: Schedule };
  /** The one-off payment request, deleted again (cancelled, and kept). */
  deletedPayment: PaymentRequest;
  /** The verified webhooks that told of each of the above. */
  events: HandledEvent[];
}

/** The steps a biller takes, in order; any refusal throws ApiError with the service's ProblemDetails. */
export async function runWalkthrough(options: WalkthroughOptions): Promise<WalkthroughResult> {
  const { api, receiver } = options;
  const log = options.log ?? (() => {});
  // Webhooks first, so that nothing made below goes untold; removed at the end, whatever happens.
  const endpoint = await registerWebhookEndpoint(api, options.webhookUrl ?? receiver.url);
  receiver.useSecret(endpoint.secret);
  log(`webhook endpoint ${endpoint.id} -> ${endpoint.url}`);
  try {
    return await walk(options, endpoint.id);
  } finally {
    if (options.keepWebhookEndpoint !== true) {
      await deleteWebhookEndpoint(api, endpoint.id);
      log(`webhook endpoint ${endpoint.id} removed`);
    }
  }
}

async function walk(options: WalkthroughOptions, webhookEndpointId: string): Promise<WalkthroughResult> {
  const { api, person, receiver } = options;
  const currency = options.currency ?? 'GBP';
  const log = options.log ?? (() => {});
  // When the person agreed to pay by salary deduction: on the biller's own form, before any call.
  const authorisedAt = new Date();

  const light = await lightAvailabilityCheck(api, person);
  log(`light availability check: ${light.availability_status}, ${light.employment_count} employment(s)`);
  const full = await fullAvailabilityCheck(api, person, currency);
  log(`full availability check: ${full.availability_status}`);
  const found = full.availability_status === 'confirmed' ? deductibleEmployment(full) : undefined;
  if (found === undefined) throw new Error(`cannot collect from this person by salary deduction: ${full.availability_status}`);
  const { employment, payroll } = found;
  const [firstPayDate] = payroll.pay_dates;
  if (firstPayDate === undefined) throw new Error('the payroll has no open pay date');
  log(`employer ${employment.employer.name}, payroll ${payroll.id} (${payroll.payment_run_frequency}), next pay date ${firstPayDate.pay_date}`);

  const mandate = await createMandate(api, { employeeId: employment.employee_id, payrollId: payroll.id, person, authorisedAt, reference: 'LOAN-0001' });
  log(`mandate ${mandate.id}: ${mandate.status}`);
  const enablement = await requestEnablement(api, mandate);
  log(`enablement: ${enablement.status}${enablement.reason === null ? '' : ` (${enablement.reason})`}`);
  if (enablement.status !== 'enabled') throw new Error(`the mandate was not enabled: ${enablement.status}`);
  const activeMandate = await getMandate(api, mandate.id);
  log(`mandate ${activeMandate.id}: ${activeMandate.status}`);

  const paymentKey = newIdempotencyKey();
  const paymentRequest = { mandateId: mandate.id, amount: 2_500, currency, dueDate: firstPayDate.pay_date };
  const { payment } = await createPaymentRequest(api, paymentRequest, paymentKey);
  log(`payment request ${payment.id}: ${payment.status}, ${payment.amount} ${payment.currency} on ${payment.target_pay_date}`);
  // A timeout would leave the outcome unknown: sending again with the same key is always safe.
  const retriedPayment = await createPaymentRequest(api, paymentRequest, paymentKey);
  log(`payment request sent again with its key: ${retriedPayment.payment.id}${retriedPayment.replayed ? ' (replayed)' : ''}`);

  const schedule = await createSchedule(api, {
    mandateId: mandate.id,
    amount: 1_000,
    count: 3,
    // One instalment per pay date: the schedule follows the payroll's own rhythm.
    interval: payroll.payment_run_frequency === 'unknown' ? 'monthly' : payroll.payment_run_frequency,
    startDate: firstPayDate.pay_date,
  });
  log(`schedule ${schedule.id}: ${schedule.status}, ${schedule.instalments.map((instalment) => instalment.target_pay_date).join(', ')}`);

  const readBack = { payment: await getPaymentRequest(api, payment.id), schedule: await getSchedule(api, schedule.id) };

  // The one-off request is no longer wanted: deleting it ends it before payroll is asked.
  const deletedPayment = await deletePaymentRequest(api, payment.id);
  log(`payment request ${deletedPayment.id} deleted: ${deletedPayment.status}`);

  // Each thing made is told of by a webhook: the mandate's creation and enablement, each payment request, the deletion.
  const expected = [
    { type: 'mandate.created', id: mandate.id },
    { type: 'mandate.updated', id: mandate.id },
    { type: 'payment_request.created', id: payment.id },
    { type: 'payment_request.updated', id: payment.id },
    ...schedule.instalments.map((instalment) => ({ type: 'payment_request.created', id: instalment.payment_id })),
  ];
  const told = (events: readonly HandledEvent[]) => expected.every((wanted) => events.some((event) => event.type === wanted.type && event.data.id === wanted.id));
  await receiver.waitFor(told, options.webhookTimeoutMs ?? 30_000);
  log(`webhooks: ${receiver.events.length} verified (${receiver.refused} refused)`);

  return { webhookEndpointId, light, full, mandate, enablement, activeMandate, payment, retriedPayment, schedule, readBack, deletedPayment, events: [...receiver.events] };
}
