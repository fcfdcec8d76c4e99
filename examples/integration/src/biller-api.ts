// The calls a biller makes, one function each, over the typed client (client.ts). Bodies and answers
// are the API's own schemas: a field renamed, removed or made required in /openapi.json is a compile
// error here once the types are regenerated. Each answer is either `data` or a typed `error` (the
// ProblemDetails the service refused with); a refusal is thrown as ApiError.
import { randomUUID } from 'node:crypto';
import { ApiError, type ApiClient, type Schemas } from './client.ts';

type AvailabilityCheck = NonNullable<Schemas['FullAvailabilityCheckRequest']['availability_check']>;
export type LightAvailability = Schemas['LightAvailabilityCheckResponse']['availability_check'];
export type FullAvailability = Schemas['FullAvailabilityCheckResponse']['availability_check'];
export type Employment = FullAvailability['employments'][number]['employment'];
export type EmploymentPayroll = Employment['payrolls'][number]['payroll'];
export type Mandate = Schemas['MandateRecordResponse'];
export type Enablement = Schemas['SalaryDeductionEnablementResponse']['enablement'];
export type PaymentRequest = Schemas['PaymentResponse'];
export type Schedule = Schemas['ScheduleResponse'];
export type WebhookEndpoint = Schemas['WebhookEndpointWithSecret'];
/** ISO 4217: the currencies the service accepts. */
export type Currency = Schemas['Currency'];

/** Who the biller asks about: the three identifiers that must all match one employee, and a name. */
export interface Person {
  national_registration_number: string;
  date_of_birth: string;
  given_name: string;
  family_name: string;
}

/**
 * An Idempotency-Key for a change. Keep it with the intent it belongs to (a row of your own, written
 * before the call) and send the same key again when retrying after a timeout or a 5xx: the service
 * answers what the first call answered and does the work once.
 */
export const newIdempotencyKey = (): string => randomUUID();

export async function registerWebhookEndpoint(api: ApiClient, url: string, eventTypes?: Schemas['EventType'][]): Promise<WebhookEndpoint> {
  const { data, error, response } = await api.POST('/webhook-endpoints', {
    params: { header: { 'Idempotency-Key': newIdempotencyKey() } },
    body: { url, ...(eventTypes === undefined ? {} : { event_types: eventTypes }) },
  });
  if (error) throw new ApiError('POST /webhook-endpoints', response.status, error);
  return data.webhook_endpoint;
}

/** Whether the person can pay by salary deduction at all, and through how many employments. */
export async function lightAvailabilityCheck(api: ApiClient, person: Person): Promise<LightAvailability> {
  const { data, error, response } = await api.POST('/deductions/availability/light', {
    body: {
      availability_check: {
        national_registration_number: person.national_registration_number,
        date_of_birth: person.date_of_birth,
        family_name: person.family_name,
      },
    },
  });
  if (error) throw new ApiError('POST /deductions/availability/light', response.status, error);
  return data.availability_check;
}

/** The employments, employers, payrolls and open pay dates a mandate and its payments can use. */
export async function fullAvailabilityCheck(api: ApiClient, person: Person, currency: Currency): Promise<FullAvailability> {
  const check: AvailabilityCheck = { ...person, currency };
  const { data, error, response } = await api.POST('/deductions/availability/full', { body: { availability_check: check } });
  if (error) throw new ApiError('POST /deductions/availability/full', response.status, error);
  return data.availability_check;
}

/** The first employment a deduction can be taken through: an opted-in employer, an active job, a pay date ahead. */
export function deductibleEmployment(availability: FullAvailability): { employment: Employment; payroll: EmploymentPayroll } | undefined {
  for (const { employment } of availability.employments) {
    if (employment.employer.salary_deduction_opt_in_status !== 'opted_in') continue;
    const found = employment.payrolls.find(({ payroll }) => payroll.employment_status === 'active' && payroll.pay_dates.length > 0);
    if (found) return { employment, payroll: found.payroll };
  }
  return undefined;
}

/** A mandate in the person's name (it must be the employee's: family name and date of birth are compared). */
export async function createMandate(
  api: ApiClient,
  record: { employeeId: string; payrollId: string; person: Person; authorisedAt: Date; reference: string },
  idempotencyKey = newIdempotencyKey(),
): Promise<Mandate> {
  const { data, error, response } = await api.POST('/mandates', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: {
      mandate_record: {
        employee_id: record.employeeId,
        payroll_id: record.payrollId,
        consumer: record.person,
        authorisation_source: { type: 'online', authorised_at: record.authorisedAt.toISOString() },
        reference: record.reference,
      },
    },
  });
  if (error) throw new ApiError('POST /mandates', response.status, error);
  return data.mandate;
}

/** Asks payroll to enable the mandate: `enabled` makes it active, `rejected` fails it, `pending` waits for the employer. */
export async function requestEnablement(api: ApiClient, mandate: Pick<Mandate, 'id' | 'employee_id' | 'payroll_id'>): Promise<Enablement> {
  const { data, error, response } = await api.POST('/deductions/enablement', {
    body: { enablement: { employee_id: mandate.employee_id, payroll_id: mandate.payroll_id, mandate_id: mandate.id } },
  });
  if (error) throw new ApiError('POST /deductions/enablement', response.status, error);
  return data.enablement;
}

export async function getMandate(api: ApiClient, mandateId: string): Promise<Mandate> {
  const { data, error, response } = await api.GET('/mandates/{mandate_id}', { params: { path: { mandate_id: mandateId } } });
  if (error) throw new ApiError('GET /mandates/{mandate_id}', response.status, error);
  return data.mandate;
}

/**
 * A payment request on an active mandate, collected on the payroll's last open pay date on or before
 * `dueDate` (the next open one without it). `replayed`: the service answered a retry of this key.
 */
export async function createPaymentRequest(
  api: ApiClient,
  request: { mandateId: string; amount: number; currency: Currency; dueDate?: string },
  idempotencyKey = newIdempotencyKey(),
): Promise<{ payment: PaymentRequest; replayed: boolean }> {
  const { data, error, response } = await api.POST('/payments', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: {
      payment_record: {
        mandate_id: request.mandateId,
        amount: request.amount,
        currency: request.currency,
        ...(request.dueDate === undefined ? {} : { due_date: request.dueDate }),
      },
    },
  });
  if (error) throw new ApiError('POST /payments', response.status, error);
  return { payment: data.payment, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

export async function getPaymentRequest(api: ApiClient, paymentId: string): Promise<PaymentRequest> {
  const { data, error, response } = await api.GET('/payments/{payment_id}', { params: { path: { payment_id: paymentId } } });
  if (error) throw new ApiError('GET /payments/{payment_id}', response.status, error);
  return data.payment;
}

/**
 * Ends a payment request payroll has not been asked to deduct yet: it becomes `cancelled` and is kept,
 * as a revoked mandate is. Deleting it again answers the same; once instructed it is refused (409).
 */
export async function deletePaymentRequest(api: ApiClient, paymentId: string): Promise<PaymentRequest> {
  const { data, error, response } = await api.DELETE('/payments/{payment_id}', { params: { path: { payment_id: paymentId } } });
  if (error) throw new ApiError('DELETE /payments/{payment_id}', response.status, error);
  return data.payment;
}

/** Stops deliveries to an endpoint and removes it (a biller has a limited number of endpoints). */
export async function deleteWebhookEndpoint(api: ApiClient, endpointId: string): Promise<void> {
  const { error, response } = await api.DELETE('/webhook-endpoints/{endpoint_id}', { params: { path: { endpoint_id: endpointId } } });
  if (error) throw new ApiError('DELETE /webhook-endpoints/{endpoint_id}', response.status, error);
}

/** `count` instalments of `amount`, one every `interval` from `startDate`; each is a payment request of its own. */
export async function createSchedule(
  api: ApiClient,
  schedule: { mandateId: string; amount: number; count: number; interval: NonNullable<Schemas['ScheduleRecordRequest']['interval']>; startDate: string },
  idempotencyKey = newIdempotencyKey(),
): Promise<Schedule> {
  const { data, error, response } = await api.POST('/schedules', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: {
      schedule_record: {
        mandate_id: schedule.mandateId,
        amount: schedule.amount,
        count: schedule.count,
        interval: schedule.interval,
        start_date: schedule.startDate,
        total_amount: schedule.amount * schedule.count,
      },
    },
  });
  if (error) throw new ApiError('POST /schedules', response.status, error);
  return data.schedule;
}

export async function getSchedule(api: ApiClient, scheduleId: string): Promise<Schedule> {
  const { data, error, response } = await api.GET('/schedules/{schedule_id}', { params: { path: { schedule_id: scheduleId } } });
  if (error) throw new ApiError('GET /schedules/{schedule_id}', response.status, error);
  return data.schedule;
}
