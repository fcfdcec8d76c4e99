import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { BankHolidayRegion, PayrollProvidersTable } from '../../platform/db/tables.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';
import { connectionOfColumns } from './provider-connection.ts';

export const PAYROLL_REGIONS = ['england-and-wales', 'scotland', 'northern-ireland'] as const satisfies readonly BankHolidayRegion[];

export const payrollRegionSchema = z.enum(PAYROLL_REGIONS).meta({
  id: 'PayrollRegion',
  description: 'Whose bank holidays a calendar follows: England and Wales, Scotland or Northern Ireland',
  example: 'england-and-wales',
});

export const LEAD_TIME_MAX_WORKING_DAYS = 30;

const leadTimeSchema = z
  .number()
  .int()
  .min(0)
  .max(LEAD_TIME_MAX_WORKING_DAYS)
  .meta({ description: 'Working days the provider needs between the lock date and its payroll cut-off', example: 2 });

const httpUrlSchema = z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).max(2048);
const providerNameSchema = z.string().trim().min(1).max(200).meta({ example: 'Acme Payroll Services' });
const clientIdSchema = z.string().trim().min(1).max(200);
const clientSecretSchema = z.string().min(1).max(1000).meta({ description: 'Stored encrypted; never shown again' });

const filesConnectionSchema = z
  .strictObject({ kind: z.literal('files') })
  .meta({ id: 'FilesOnlyConnection', description: 'The provider has no API: it takes instruction files only', example: { kind: 'files' } });

const referenceApiConnectionInputSchema = z
  .strictObject({
    kind: z.literal('reference_api'),
    base_url: httpUrlSchema.meta({ example: 'https://payroll.acme.example/api' }),
    token_url: httpUrlSchema.meta({ example: 'https://payroll.acme.example/oauth2/token' }),
    client_id: clientIdSchema.meta({ example: 'salary-deductions' }),
    client_secret: clientSecretSchema,
  })
  .meta({
    id: 'ReferenceApiConnectionInput',
    description: "The provider's HTTP reference interface and the OAuth client credentials we present to it",
    example: {
      kind: 'reference_api',
      base_url: 'https://payroll.acme.example/api',
      token_url: 'https://payroll.acme.example/oauth2/token',
      client_id: 'salary-deductions',
      client_secret: 's3cret-from-the-provider',
    },
  });

export const newPayrollProviderSchema = z
  .strictObject({
    name: providerNameSchema,
    region: payrollRegionSchema.default('england-and-wales'),
    /** Default: the installation's DEFAULT_PROVIDER_LEAD_DAYS. */
    lead_time_working_days: leadTimeSchema.optional(),
    connection: z.discriminatedUnion('kind', [referenceApiConnectionInputSchema, filesConnectionSchema]),
  })
  .meta({
    id: 'NewPayrollProvider',
    description: 'A live payroll provider: its name, region, lead time and how we reach it',
    example: { name: 'Acme Payroll Services', region: 'scotland', lead_time_working_days: 2, connection: { kind: 'files' } },
  });

export type NewPayrollProviderInput = z.infer<typeof newPayrollProviderSchema>;

const referenceApiConnectionChangeSchema = z
  .strictObject({
    kind: z.literal('reference_api'),
    base_url: httpUrlSchema.optional(),
    token_url: httpUrlSchema.optional(),
    client_id: clientIdSchema.optional(),
    client_secret: clientSecretSchema.optional(),
  })
  .meta({
    id: 'ReferenceApiConnectionChange',
    description: 'Fields of the reference interface to change; one left out keeps its value (a provider moving from files must give all)',
    example: { kind: 'reference_api', client_secret: 'the-rotated-secret' },
  });

export const payrollProviderChangeSchema = z
  .strictObject({
    name: providerNameSchema.optional(),
    region: payrollRegionSchema.optional(),
    lead_time_working_days: leadTimeSchema.optional(),
    connection: z.discriminatedUnion('kind', [referenceApiConnectionChangeSchema, filesConnectionSchema]).optional(),
    reason: z.string().trim().min(1).max(500).optional().meta({ description: 'Kept in the audit log' }),
  })
  .meta({
    id: 'PayrollProviderChange',
    description: 'What to change of a payroll provider; fields left out keep their value',
    example: { lead_time_working_days: 3, reason: 'provider asked for an extra day, ticket OPS-12' },
  });

export type PayrollProviderChange = z.infer<typeof payrollProviderChangeSchema>;

const connectionResponseSchema = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('reference_api'),
      base_url: z.string(),
      token_url: z.string().nullable(),
      client_id: z.string().nullable(),
      /** Whether a secret is stored; the secret itself is never shown. */
      client_secret_set: z.boolean(),
    }),
    z.object({ kind: z.literal('files') }),
  ])
  .meta({
    id: 'PayrollProviderConnection',
    description: 'How we reach the provider; the client secret is never shown, only whether one is stored',
    example: {
      kind: 'reference_api',
      base_url: 'https://payroll.acme.example/api',
      token_url: 'https://payroll.acme.example/oauth2/token',
      client_id: 'salary-deductions',
      client_secret_set: true,
    },
  });

const providerExample = {
  id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c70',
  name: 'Acme Payroll Services',
  region: 'england-and-wales',
  lead_time_working_days: 2,
  sandbox: false,
  connection: { kind: 'files' },
  created_at: '2026-11-25T09:30:00.000Z',
  updated_at: '2026-11-25T09:30:00.000Z',
};

export const payrollProviderSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    region: payrollRegionSchema,
    lead_time_working_days: z.number().int(),
    /** Sandbox providers (and their employers, payrolls and employees) are seen only by sandbox clients. */
    sandbox: z.boolean(),
    connection: connectionResponseSchema,
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'PayrollProvider', description: 'A payroll provider, without its client secret', example: providerExample });

export type PayrollProviderResource = z.infer<typeof payrollProviderSchema>;

export const payrollProviderEnvelopeSchema = z
  .object({ payroll_provider: payrollProviderSchema })
  .meta({ id: 'PayrollProviderEnvelope', description: 'One payroll provider', example: { payroll_provider: providerExample } });

export const payrollProviderChangeResultSchema = z
  .object({
    payroll_provider: payrollProviderSchema,
    lock_dates_changed: z.int().meta({
      description: "How many unlocked pay dates of the provider's payrolls got a new lock date (a new lead time moves them; locked pay dates keep theirs)",
    }),
  })
  .meta({
    id: 'PayrollProviderChangeResult',
    description: 'The payroll provider, changed, and how many lock dates moved because of it',
    example: { payroll_provider: { ...providerExample, lead_time_working_days: 3 }, lock_dates_changed: 4 },
  });

export type PayrollProviderChangeResult = z.infer<typeof payrollProviderChangeResultSchema>;

export const payrollProvidersPageSchema = z.object({ payroll_providers: z.array(payrollProviderSchema), paging: pagingResponseSchema }).meta({
  id: 'ListPayrollProvidersResponse',
  description: 'A page of payroll providers, newest first',
  example: { payroll_providers: [providerExample], paging: pagingExample },
});

export function toPayrollProviderResource(row: Selectable<PayrollProvidersTable>): PayrollProviderResource {
  const connection = connectionOfColumns(row);
  return {
    id: row.id,
    name: row.name,
    region: row.region,
    lead_time_working_days: row.lead_time_working_days,
    sandbox: row.sandbox,
    connection:
      connection.kind === 'files'
        ? { kind: 'files' }
        : {
            kind: 'reference_api',
            base_url: connection.base_url,
            token_url: connection.token_url,
            client_id: connection.client_id,
            client_secret_set: connection.client_secret !== null,
          },
    created_at: isoInstant(row.created_at),
    updated_at: isoInstant(row.updated_at),
  };
}
