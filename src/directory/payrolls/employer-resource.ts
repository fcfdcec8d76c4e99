import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { EmployerOptInChangesTable, EmployersTable } from '../../platform/db/tables.ts';
import { optInStatusSchema } from '../payroll-providers/reference-schemas.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant, uuidSchema } from '../../platform/shared/schemas.ts';

const optInStatus = optInStatusSchema.meta({
  description: 'Whether the employer takes part in salary deductions: pending (not decided), opted_in or opted_out',
  example: 'opted_in',
});

export const newEmployerSchema = z
  .strictObject({
    payroll_provider_id: uuidSchema,
    external_id: z.string().trim().min(1).max(200).meta({ description: 'The employer’s id at its payroll provider', example: 'ACME-RETAIL-1' }),
    name: z.string().trim().min(1).max(200).meta({ example: 'Acme Retail plc' }),
    sic_code: z
      .string()
      .trim()
      .regex(/^[0-9]{4,5}$/, 'must be a SIC code of 4 or 5 digits')
      .nullable()
      .default(null)
      .meta({ example: '47110' }),
    industry_name: z.string().trim().min(1).max(200).nullable().default(null).meta({ example: 'Retail sale in non-specialised stores' }),
    salary_deduction_opt_in_status: optInStatus.default('pending'),
  })
  .meta({
    id: 'NewEmployer',
    description: 'An employer paid through a payroll provider; its opt-in status starts its history',
    example: {
      payroll_provider_id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c70',
      external_id: 'ACME-RETAIL-1',
      name: 'Acme Retail plc',
      sic_code: '47110',
      industry_name: 'Retail sale in non-specialised stores',
      salary_deduction_opt_in_status: 'pending',
    },
  });

export type NewEmployerInput = z.input<typeof newEmployerSchema>;

export const optInChangeRequestSchema = z
  .strictObject({
    salary_deduction_opt_in_status: optInStatus,
    reason: z.string().trim().min(1).max(500).meta({ description: 'Why (kept in the history and the audit log)', example: 'signed opt-in form received 2026-11-20' }),
  })
  .meta({
    id: 'EmployerOptInChangeRequest',
    description: "A change of the employer's opt-in status, with its reason",
    example: { salary_deduction_opt_in_status: 'opted_in', reason: 'signed opt-in form received 2026-11-20' },
  });

export type OptInChangeRequest = z.input<typeof optInChangeRequestSchema>;

export const payoutFundingChangeRequestSchema = z
  .strictObject({
    payout_funding: z.enum(['received', 'deducted']).nullable().meta({ description: "null: follow the installation's PAYOUT_FUNDING" }),
    reason: z.string().trim().min(1).max(500).meta({ description: 'Why (kept in the audit log)', example: 'public sector employer, remits reliably' }),
  })
  .meta({
    id: 'EmployerPayoutFundingChangeRequest',
    description: "What makes the employer's collections payable from now on, with the reason",
    example: { payout_funding: 'deducted', reason: 'public sector employer, remits reliably' },
  });

export const optInChangeSchema = z
  .object({
    from_status: optInStatusSchema.nullable(),
    to_status: optInStatusSchema,
    changed_by: z.string(),
    reason: z.string().nullable(),
    changed_at: z.iso.datetime(),
  })
  .meta({
    id: 'EmployerOptInChange',
    description: 'One move of an employer’s opt-in status: by an operator, or by its payroll provider (provider sync)',
    example: { from_status: 'pending', to_status: 'opted_in', changed_by: 'alice', reason: 'signed opt-in form', changed_at: '2026-11-25T09:30:00.000Z' },
  });

const employerExample = {
  id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c71',
  payroll_provider_id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c70',
  external_id: 'ACME-RETAIL-1',
  name: 'Acme Retail plc',
  sic_code: '47110',
  industry_name: 'Retail sale in non-specialised stores',
  salary_deduction_opt_in_status: 'opted_in',
  payout_funding: 'received',
  created_at: '2026-11-25T09:30:00.000Z',
  updated_at: '2026-11-25T09:30:00.000Z',
};

export const employerSchema = z
  .object({
    id: z.uuid(),
    payroll_provider_id: z.uuid(),
    external_id: z.string(),
    name: z.string(),
    sic_code: z.string().nullable(),
    industry_name: z.string().nullable(),
    salary_deduction_opt_in_status: optInStatusSchema,
    payout_funding: z.enum(['received', 'deducted']).nullable().meta({
      description:
        "What makes this employer's collections payable: `received` (its remittance on a bank statement) or `deducted` (payroll's report, for trusted employers); null follows the installation's PAYOUT_FUNDING",
    }),
    /** On GET /admin/employers/{id} and after a change; lists leave it out. */
    opt_in_history: z.array(optInChangeSchema).optional(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Employer', description: 'An employer and its opt-in status (with its history when shown alone)', example: employerExample });

export type EmployerResource = z.infer<typeof employerSchema>;

export const employerEnvelopeSchema = z
  .object({ employer: employerSchema })
  .meta({ id: 'EmployerEnvelope', description: 'One employer', example: { employer: employerExample } });

export const employersPageSchema = z
  .object({ employers: z.array(employerSchema), paging: pagingResponseSchema })
  .meta({ id: 'ListEmployersResponse', description: 'A page of employers, newest first', example: { employers: [employerExample], paging: pagingExample } });

export function toEmployerResource(row: Selectable<EmployersTable>, history?: ReadonlyArray<Selectable<EmployerOptInChangesTable>>): EmployerResource {
  return {
    id: row.id,
    payroll_provider_id: row.payroll_provider_id,
    external_id: row.external_id,
    name: row.name,
    sic_code: row.sic_code,
    industry_name: row.industry_name,
    salary_deduction_opt_in_status: row.salary_deduction_opt_in_status,
    payout_funding: row.payout_funding,
    ...(history
      ? {
          opt_in_history: history.map((change) => ({
            from_status: change.from_status,
            to_status: change.to_status,
            changed_by: change.changed_by,
            reason: change.reason,
            changed_at: isoInstant(change.changed_at),
          })),
        }
      : {}),
    created_at: isoInstant(row.created_at),
    updated_at: isoInstant(row.updated_at),
  };
}
