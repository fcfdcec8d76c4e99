import { DateTime } from 'luxon';
import { isPayDateOpen } from '../../directory/calendars/target-pay-date.ts';
import type { FullAvailabilityRequest, FullAvailabilityResponse, LightAvailabilityRequest } from '../../directory/payroll-providers/reference-schemas.ts';
import type { EmploymentRow, PayrollPayDateRow } from './availability-repository.ts';
import { disclosedSalary, type AvailabilityStatus } from './availability-status.ts';

export {
  fullAvailabilityRequestSchema,
  fullAvailabilityResponseSchema,
  lightAvailabilityRequestSchema,
  lightAvailabilityResponseSchema,
} from '../../directory/payroll-providers/reference-schemas.ts';

export type FullAvailabilityCheck = FullAvailabilityRequest['availability_check'];
export type LightAvailabilityCheck = LightAvailabilityRequest['availability_check'];

type EmploymentResource = FullAvailabilityResponse['availability_check']['employments'][number];

/** A calendar date as the API's date-time: midnight in the service time zone, with its offset. */
export function serviceMidnight(date: string, timeZone: string): string {
  return DateTime.fromISO(date, { zone: timeZone }).toFormat("yyyy-MM-dd'T'HH:mm:ssZZ");
}

/**
 * Our employments (one row per employee and payroll) as the reference interface shows them: one
 * `employment` per employee and employer, holding that employer's payrolls. Only pay dates that can
 * still take a deduction are listed, since those are what a biller can plan against. The employment
 * started on its earliest payroll's start date (when payroll never said: when we learnt of it).
 * Salaries are shown only where disclosedSalary allows.
 */
export function toEmploymentResources(
  rows: readonly EmploymentRow[],
  payDates: readonly PayrollPayDateRow[],
  context: { today: string; timeZone: string; currency: string | null },
): EmploymentResource[] {
  const openPayDates = new Map<string, PayrollPayDateRow[]>();
  for (const d of payDates) {
    if (!isPayDateOpen({ payDate: d.pay_date, lockDate: d.lock_date, locked: d.locked_at !== null }, context.today)) continue;
    openPayDates.set(d.payroll_id, [...(openPayDates.get(d.payroll_id) ?? []), d]);
  }

  const groups = new Map<string, EmploymentRow[]>();
  for (const row of rows) {
    const key = `${row.employee_id}/${row.employer_id}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }

  return [...groups.values()].map((group) => {
    const first = group[0]!;
    const startDates = group.map((r) => r.start_date ?? DateTime.fromJSDate(r.created_at, { zone: context.timeZone }).toISODate()!);
    return {
      employment: {
        employee_id: first.employee_id,
        start_date: serviceMidnight(startDates.sort()[0]!, context.timeZone),
        currency: first.currency,
        employer: {
          salary_deduction_opt_in_status: first.employer_opt_in,
          name: first.employer_name,
          sic_code: first.employer_sic_code ?? '',
          industry_name: first.employer_industry_name ?? '',
          id: first.employer_external_id,
        },
        payrolls: group.map((r) => ({
          payroll: {
            id: r.payroll_id,
            employment_status: r.employment_status,
            contract_type: r.contract_type,
            payment_run_frequency: r.payment_run_frequency,
            annualised_salary: disclosedSalary(
              {
                employmentStatus: r.employment_status,
                employerOptIn: r.employer_opt_in,
                currency: r.currency,
                annualisedSalary: r.annualised_salary,
              },
              context.currency,
            ),
            pay_dates: (openPayDates.get(r.payroll_id) ?? []).map((d) => ({
              pay_date: d.pay_date,
              payroll_cutoff_date: d.payroll_cutoff_date,
              pay_period: d.pay_period,
            })),
          },
        })),
      },
    };
  });
}

export function toFullAvailabilityResource(status: AvailabilityStatus, currency: string, employments: EmploymentResource[]): FullAvailabilityResponse {
  return { availability_check: { availability_status: status, currency, employments } };
}
