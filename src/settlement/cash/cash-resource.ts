import type { Selectable } from 'kysely';
import { z } from 'zod';
import type { BankCreditsTable, BankStatementEntriesTable, BankStatementsTable, RemittanceMatchesTable } from '../../platform/db/tables.ts';

export const bankCreditStateSchema = z.enum(['open', 'held', 'set_aside', 'reversed']).meta({
  id: 'BankCreditState',
  example: 'open',
  description:
    'open: the matching rules may place it; held: a person must look first (it conflicts with a known credit, or brings back a payment of ours); ' +
    'set_aside: a person said it is no remittance; reversed: the bank took it back.',
});
const SET_ASIDE_CATEGORY_VALUES = ['not_a_remittance', 'bank_interest', 'returned_to_sender', 'duplicate', 'other'] as const;
export const setAsideCategorySchema = z.enum(SET_ASIDE_CATEGORY_VALUES).meta({
  id: 'SetAsideCategory',
  description:
    'What money set aside is, since it is no remittance: a payment not meant for a payroll, bank interest, money to return to its sender, a duplicate, or something else (the reason says what).',
  example: 'bank_interest',
});
export const statementEntryOutcomeSchema = z.enum(['new', 'already_known', 'superseded', 'conflicting', 'reversal', 'unresolved_reversal', 'held', 'debit', 'unusable']).meta({
  id: 'BankStatementEntryOutcome',
  description:
    'new: a credit first seen; already_known: a credit the account already had (detail says by which reference); superseded: a booked ' +
    "statement's entry confirming a credit a camt.054 notified; conflicting: shares a reference with a known credit but not its amount (held " +
    'for a person); reversal: took back the credit named; unresolved_reversal: a reversal no rule could place (for a person); held: brings ' +
    'back a payment of ours; debit: money out, not matched; unusable: the entry could not be read (detail says why).',
  example: 'superseded',
});

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

export const bankStatementSchema = z
  .object({
    id: z.uuid(),
    collection_account_id: z.uuid(),
    format: z.enum(['camt.053', 'camt.054', 'csv']),
    statement_id: z.string().meta({ description: "The bank's id of the statement" }),
    file_name: z.string().nullable(),
    content_sha256: z.string().meta({ description: 'Hex SHA-256 of the file: the same file again is recognised and changes nothing' }),
    currency: z.string(),
    credits: z.number().int(),
    credits_total: z.number().int().meta({ description: 'Minor units' }),
    credits_already_imported: z.number().int().meta({ description: 'Credits an earlier statement (an intraday notification) already brought' }),
    debits_ignored: z.number().int(),
    page_number: z.number().int().meta({ description: 'The page of a paginated statement (1 when it is not)' }),
    last_page: z.boolean(),
    electronic_sequence_number: z.string().nullable(),
    legal_sequence_number: z.string().nullable(),
    integrity_findings: z
      .array(z.object({ code: z.string(), detail: z.string() }))
      .meta({ description: 'What the checks found: balances that do not add up, totals that disagree, a gap or repeat in the sequence numbers' }),
    entry_outcomes: z.record(z.string(), z.number().int()).meta({ description: 'How many entries had each outcome' }),
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
      page_number: 1,
      last_page: true,
      electronic_sequence_number: '330',
      legal_sequence_number: '330',
      integrity_findings: [],
      entry_outcomes: { new: 40, superseded: 2, debit: 3 },
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
    page_number: row.page_number,
    last_page: row.last_page,
    electronic_sequence_number: row.electronic_sequence_number,
    legal_sequence_number: row.legal_sequence_number,
    integrity_findings: row.integrity_findings,
    entry_outcomes: row.entry_outcomes,
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
    description: "Part (or all) of a bank credit, matched to a payroll pay date's remittance.",
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
    account_servicer_reference: z.string().nullable().meta({ description: "The bank's reference of the entry (camt AcctSvcrRef)" }),
    entry_reference: z.string().nullable().meta({ description: 'The entry reference the file gave (camt NtryRef): banks reuse it, so it identifies nothing alone' }),
    booked: z.boolean().meta({ description: 'A camt.053 (or CSV) statement booked it; false while only a camt.054 notified it' }),
    state: bankCreditStateSchema,
    state_reason: z.string().nullable().meta({ description: 'Why it is held, set aside, reversed or was restored' }),
    // Not the SetAsideCategory component: a reference to it cannot also be null.
    set_aside_category: z.union([z.enum(SET_ASIDE_CATEGORY_VALUES), z.null()]).meta({ description: 'What the money is, while the credit is set aside' }),
    state_changed_at: z.iso.datetime().nullable(),
    state_changed_by: z.string().nullable(),
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
      remittance_information: 'SDR261127P00000012',
      debtor_name: 'Northwind Traders Ltd',
      debtor_account: '20000012345678',
      account_servicer_reference: 'BANK-REF-000123',
      entry_reference: '1',
      booked: true,
      state: 'open',
      state_reason: null,
      set_aside_category: null,
      state_changed_at: null,
      state_changed_by: null,
    },
  });

export function toBankCreditResource(row: Selectable<BankCreditsTable>): z.infer<typeof bankCreditSchema> {
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
    account_servicer_reference: row.account_servicer_reference,
    entry_reference: row.entry_reference,
    booked: row.booked_statement_id !== null,
    state: row.state,
    state_reason: row.state_reason,
    set_aside_category: row.set_aside_category,
    state_changed_at: iso(row.state_changed_at),
    state_changed_by: row.state_changed_by,
  };
}

export const statementEntrySchema = z
  .object({
    id: z.uuid(),
    bank_statement_id: z.uuid(),
    entry_index: z.number().int().meta({ description: 'Its place in the statement, from 0 (a batch detailed entry by entry has one per part)' }),
    direction: z.enum(['credit', 'debit']),
    amount: z.number().int(),
    currency: z.string(),
    booking_date: z.iso.date().nullable(),
    bank_reference: z.string(),
    outcome: statementEntryOutcomeSchema,
    bank_credit_id: z.uuid().nullable().meta({ description: 'The credit the entry is (new or already known), or the credit a reversal took back' }),
    detail: z.string().nullable(),
    resolved_at: z.iso.datetime().nullable(),
    resolved_by: z.string().nullable(),
  })
  .meta({
    id: 'BankStatementEntry',
    description: 'What the import made of one entry of a statement.',
    example: {
      id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a05',
      bank_statement_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a01',
      entry_index: 0,
      direction: 'credit',
      amount: 1_498_000,
      currency: 'GBP',
      booking_date: '2026-11-30',
      bank_reference: 'BANK-REF-000123',
      outcome: 'superseded',
      bank_credit_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a04',
      detail: 'known by its account servicer reference BANK-REF-000123',
      resolved_at: null,
      resolved_by: null,
    },
  });

export function toStatementEntryResource(row: Selectable<BankStatementEntriesTable>): z.infer<typeof statementEntrySchema> {
  return {
    id: row.id,
    bank_statement_id: row.bank_statement_id,
    entry_index: row.entry_index,
    direction: row.direction,
    amount: row.amount,
    currency: row.currency,
    booking_date: row.booking_date,
    bank_reference: row.bank_reference,
    outcome: row.outcome,
    bank_credit_id: row.bank_credit_id,
    detail: row.detail,
    resolved_at: iso(row.resolved_at),
    resolved_by: row.resolved_by,
  };
}
