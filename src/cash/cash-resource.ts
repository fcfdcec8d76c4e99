import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { BankCreditsTable, BankStatementsTable, RemittanceMatchesTable } from '../db/tables.ts';

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export const bankStatementSchema = z
  .object({
    id: z.uuid(),
    collection_account_id: z.uuid(),
    format: z.enum(['camt.053', 'camt.054', 'csv']),
    statement_id: z.string().meta({ description: "The bank's id of the statement" }),
    file_name: z.string().nullable(),
    content_sha256: z.string().meta({ description: "Hex SHA-256 of the file: the same file again is recognised and changes nothing" }),
    currency: z.string(),
    credits: z.number().int(),
    credits_total: z.number().int().meta({ description: 'Minor units' }),
    credits_already_imported: z.number().int().meta({ description: 'Credits an earlier statement (an intraday notification) already brought' }),
    debits_ignored: z.number().int(),
    imported_at: z.iso.datetime(),
    imported_by: z.string(),
  })
  .meta({
    id: 'BankStatement',
    description: 'A bank statement of a collection account, as imported.',
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a01',
      collection_account_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a02',
      format: 'camt.053',
      statement_id: 'STMT-2026-11-30-001',
      file_name: 'camt053-2026-11-30.xml',
      content_sha256: '9f2c6a0b1d3e5f7a9c1e3d5f7b9a1c3e5d7f9b1a3c5e7d9f1b3a5c7e9d1f3b5a',
      currency: 'GBP',
      credits: 42,
      credits_total: 18_250_000,
      credits_already_imported: 0,
      debits_ignored: 3,
      imported_at: '2026-11-30T18:05:00.000Z',
      imported_by: 'client 019a7b2c-0000-7000-8000-00000000000a',
    },
  });

export function toBankStatementResource(row: Selectable<BankStatementsTable>): z.infer<typeof bankStatementSchema> {
  return {
    id: row.id,
    collection_account_id: row.collection_account_id,
    format: row.format,
    statement_id: row.statement_id,
    file_name: row.file_name,
    content_sha256: row.content_sha256.toString('hex'),
    currency: row.currency,
    credits: row.credits,
    credits_total: row.credits_total,
    credits_already_imported: row.credits_already_imported,
    debits_ignored: row.debits_ignored,
    imported_at: iso(row.imported_at)!,
    imported_by: row.imported_by,
  };
}

export const remittanceMatchSchema = z
  .object({
    id: z.uuid(),
    bank_credit_id: z.uuid(),
    payroll_id: z.uuid(),
    pay_date: z.iso.date(),
    amount: z.number().int(),
    rule: z.enum(['exact', 'normalised', 'many_to_one', 'one_to_many', 'tolerance', 'manual']).meta({ description: 'The rule (or person) that made the match' }),
    flagged: z.boolean().meta({ description: 'Matched within the tolerance, not exactly: worth a look' }),
    matched_at: z.iso.datetime(),
    matched_by: z.string(),
    unmatched_at: z.iso.datetime().nullable(),
    unmatched_by: z.string().nullable(),
    unmatch_reason: z.string().nullable(),
  })
  .meta({
    id: 'RemittanceMatch',
    description: 'Part (or all) of a bank credit, matched to a payroll pay date\'s remittance.',
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a03',
      bank_credit_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a04',
      payroll_id: '019a7b2c-0000-7000-8000-000000000001',
      pay_date: '2026-11-27',
      amount: 1_498_000,
      rule: 'exact',
      flagged: false,
      matched_at: '2026-11-30T18:05:01.000Z',
      matched_by: 'rules',
      unmatched_at: null,
      unmatched_by: null,
      unmatch_reason: null,
    },
  });

export function toRemittanceMatchResource(row: Selectable<RemittanceMatchesTable>): z.infer<typeof remittanceMatchSchema> {
  return {
    id: row.id,
    bank_credit_id: row.bank_credit_id,
    payroll_id: row.payroll_id,
    pay_date: row.pay_date,
    amount: row.amount,
    rule: row.rule,
    flagged: row.flagged,
    matched_at: iso(row.matched_at)!,
    matched_by: row.matched_by,
    unmatched_at: iso(row.unmatched_at),
    unmatched_by: row.unmatched_by,
    unmatch_reason: row.unmatch_reason,
  };
}

export const bankCreditSchema = z
  .object({
    id: z.uuid(),
    bank_statement_id: z.uuid(),
    bank_reference: z.string(),
    amount: z.number().int(),
    matched_amount: z.number().int(),
    unmatched_amount: z.number().int(),
    currency: z.string(),
    booking_date: z.iso.date(),
    value_date: z.iso.date().nullable(),
    remittance_information: z.string().nullable().meta({ description: "The payer's reference as the bank passed it on" }),
    debtor_name: z.string().nullable(),
    debtor_account: z.string().nullable(),
  })
  .meta({
    id: 'BankCredit',
    description: 'Money received on a collection account, with how much of it is matched to remittances.',
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a04',
      bank_statement_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a01',
      bank_reference: 'BANK-REF-000123',
      amount: 1_498_000,
      matched_amount: 0,
      unmatched_amount: 1_498_000,
      currency: 'GBP',
      booking_date: '2026-11-30',
      value_date: '2026-11-30',
      remittance_information: 'SDR261127P12',
      debtor_name: 'Northwind Traders Ltd',
      debtor_account: '20000012345678',
    },
  });

export function toBankCreditResource(row: Pick<Selectable<BankCreditsTable>, 'id' | 'bank_statement_id' | 'bank_reference' | 'amount' | 'matched_amount' | 'currency' | 'booking_date' | 'value_date' | 'remittance_information' | 'debtor_name' | 'debtor_account'>): z.infer<typeof bankCreditSchema> {
  return {
    id: row.id,
    bank_statement_id: row.bank_statement_id,
    bank_reference: row.bank_reference,
    amount: row.amount,
    matched_amount: row.matched_amount,
    unmatched_amount: row.amount - row.matched_amount,
    currency: row.currency,
    booking_date: row.booking_date,
    value_date: row.value_date,
    remittance_information: row.remittance_information,
    debtor_name: row.debtor_name,
    debtor_account: row.debtor_account,
  };
}
