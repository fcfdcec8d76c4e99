import type { z } from 'zod';
import type { availabilityStatusSchema, employmentStatusSchema, optInStatusSchema } from '../../directory/payroll-providers/reference-schemas.ts';

export type AvailabilityStatus = z.infer<typeof availabilityStatusSchema>;

/** What decides whether one employment can carry salary deductions. */
export interface EmploymentStanding {
  employmentStatus: z.infer<typeof employmentStatusSchema>;
  employerOptIn: z.infer<typeof optInStatusSchema>;
  currency: string;
}

/**
 * Whether a biller can plan deductions on this employment: it is active, its employer has not opted
 * out, and it is paid in the wanted currency (when the caller names one: deductions are collected in
 * the payroll's currency).
 */
export function canCarryDeduction(employment: EmploymentStanding, currency: string | null): boolean {
  return employment.employmentStatus === 'active' && employment.employerOptIn !== 'opted_out' && (currency === null || employment.currency === currency);
}

/**
 * The salary a full check shows for one payroll. A lender needs it to judge whether the deductions it
 * plans are affordable, and only on an employment that can carry them: for a leaver, an employer that
 * opted out or a payroll in another currency it is none of the caller's business, and shows as 0
 * (the interface's shape has no null; 0 also stands for a salary payroll never told us).
 */
export function disclosedSalary(employment: EmploymentStanding & { annualisedSalary: number | null }, currency: string | null): number {
  return canCarryDeduction(employment, currency) ? (employment.annualisedSalary ?? 0) : 0;
}

/**
 * The availability rule. Only an employment that can carry a deduction counts; among those, an
 * opted-in employer confirms it, and an employer still deciding means "wait", which is worth telling
 * the caller apart from a plain no. A person we know but cannot deduct from (leaver, unknown status,
 * employer opted out, other currency) is not_eligible, not not_found.
 */
export function availabilityStatus(input: { employeeFound: boolean; employments: readonly EmploymentStanding[]; currency: string | null }): AvailabilityStatus {
  if (!input.employeeFound) return 'not_found';
  const usable = input.employments.filter((e) => canCarryDeduction(e, input.currency));
  if (usable.some((e) => e.employerOptIn === 'opted_in')) return 'confirmed';
  if (usable.some((e) => e.employerOptIn === 'pending')) return 'pending_employer_opt_in';
  return 'not_eligible';
}

const RANK: Readonly<Record<AvailabilityStatus, number>> = {
  not_found: 0,
  not_eligible: 1,
  pending_employer_opt_in: 2,
  confirmed: 3,
};

/** Several sources answered for one person (our directory, providers): the most useful answer wins. */
export function bestAvailabilityStatus(statuses: readonly AvailabilityStatus[]): AvailabilityStatus {
  return statuses.reduce<AvailabilityStatus>((best, s) => (RANK[s] > RANK[best] ? s : best), 'not_found');
}
