import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { BeneficiaryAccountsTable, CollectionAccountsTable } from '../../platform/db/tables.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';
import { pain001Name, paymentFileNameProblem } from './payment-text.ts';

const accountExample = {
  sort_code: '20-00-00',
  account_number: '41234978',
  account_holder_name: 'Salary Deductions Collections Ltd',
  payment_file_name: 'Salary Deductions Collections Ltd',
  payment_file_name_problem: null,
};

const collectionAccountExample = {
  id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c6d',
  currency: 'GBP',
  ...accountExample,
  active: true,
  created_at: '2026-11-25T09:30:00.000Z',
  deactivated_at: null,
};

const beneficiaryAccountExample = {
  id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c6e',
  biller_client_id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c6f',
  currency: 'GBP',
  sort_code: '60-16-13',
  account_number: '31926819',
  account_holder_name: 'Müller & Söhne Lending Ltd',
  payment_file_name: 'Muller and Sohne Lending Ltd',
  payment_file_name_problem: null,
  active: true,
  created_at: '2026-11-25T09:30:00.000Z',
  deactivated_at: null,
};

/**
 * A collection or beneficiary account as stored: history, never changed in place. One account is
 * active per currency (and biller); those it replaced stay, inactive, with when they were.
 */
const storedAccountFields = {
  id: z.uuid(),
  currency: z.string().meta({ description: 'ISO 4217 code', example: 'GBP' }),
  sort_code: z.string(),
  account_number: z.string(),
  account_holder_name: z.string(),
  payment_file_name: z.string().meta({
    description:
      'The holder name as a pain.001 payment file writes it: in the characters banks accept (accents dropped, Cyrillic and Greek romanised, & as "and") and at most 70 characters',
    example: 'Muller and Sohne Lending Ltd',
  }),
  payment_file_name_problem: z.string().nullable().meta({
    description:
      'Why the holder name would be refused if set up today (an account stored before names were checked): fewer than 2 letters or digits, or longer than 70 characters, in a payment file. The file still pays the account under payment_file_name; set up the account again with the name the bank holds',
    example: null,
  }),
  active: z.boolean(),
  created_at: z.iso.datetime(),
  deactivated_at: z.iso.datetime().nullable(),
};

type StoredAccountRow = Selectable<CollectionAccountsTable> | Selectable<BeneficiaryAccountsTable>;

function storedAccountResource(row: StoredAccountRow) {
  return {
    id: row.id,
    currency: row.currency,
    sort_code: row.sort_code,
    account_number: row.account_number,
    account_holder_name: row.account_holder_name,
    payment_file_name: pain001Name(row.account_holder_name),
    payment_file_name_problem: paymentFileNameProblem(row.account_holder_name),
    active: row.active,
    created_at: isoInstant(row.created_at),
    deactivated_at: row.deactivated_at === null ? null : isoInstant(row.deactivated_at),
  };
}

export const collectionAccountSchema = z.object(storedAccountFields).meta({
  id: 'CollectionAccount',
  description: 'Our account that employers remit deducted money into, in one currency; instruction files name the active one',
  example: collectionAccountExample,
});

export type CollectionAccountResource = z.infer<typeof collectionAccountSchema>;

export const collectionAccountEnvelopeSchema = z.object({ collection_account: collectionAccountSchema, replaced: collectionAccountSchema.nullable() }).meta({
  id: 'CollectionAccountChange',
  description: 'The currency’s new active collection account and the one it replaced (null for the first)',
  example: {
    collection_account: collectionAccountExample,
    replaced: {
      ...collectionAccountExample,
      id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c60',
      account_number: '41234390',
      active: false,
      created_at: '2026-01-05T09:00:00.000Z',
      deactivated_at: '2026-11-25T09:30:00.000Z',
    },
  },
});

export const collectionAccountListSchema = z.object({ collection_accounts: z.array(collectionAccountSchema) }).meta({
  id: 'ListCollectionAccountsResponse',
  description: 'Every collection account, per currency newest first, active and replaced',
  example: { collection_accounts: [collectionAccountExample] },
});

export function toCollectionAccountResource(row: Selectable<CollectionAccountsTable>): CollectionAccountResource {
  return storedAccountResource(row);
}

export const beneficiaryAccountSchema = z.object({ ...storedAccountFields, biller_client_id: z.uuid() }).meta({
  id: 'BeneficiaryAccountResponse',
  description: "Where a biller's payouts in one currency are paid; a change adds a new account and keeps the old one, inactive",
  example: beneficiaryAccountExample,
});

export type BeneficiaryAccountResource = z.infer<typeof beneficiaryAccountSchema>;

export const beneficiaryAccountChangeSchema = z.object({ beneficiary_account: beneficiaryAccountSchema, replaced: beneficiaryAccountSchema.nullable() }).meta({
  id: 'BeneficiaryAccountChange',
  description: "The biller's new active account in the currency and the one it replaced (null for the first)",
  example: {
    beneficiary_account: beneficiaryAccountExample,
    replaced: {
      ...beneficiaryAccountExample,
      id: '0190f3c4-1c2d-7a8b-9c0d-1e2f3a4b5c61',
      account_number: '31926800',
      active: false,
      created_at: '2026-02-02T10:00:00.000Z',
      deactivated_at: '2026-11-25T09:30:00.000Z',
    },
  },
});

export const beneficiaryAccountListSchema = z.object({ beneficiary_accounts: z.array(beneficiaryAccountSchema) }).meta({
  id: 'ListBeneficiaryAccountsResponse',
  description: "A biller's accounts per currency newest first: the active one and every one it replaced",
  example: { beneficiary_accounts: [beneficiaryAccountExample] },
});

export function toBeneficiaryAccountResource(row: Selectable<BeneficiaryAccountsTable>): BeneficiaryAccountResource {
  return { ...storedAccountResource(row), biller_client_id: row.biller_client_id };
}
