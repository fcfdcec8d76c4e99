import { queryFlagSchema } from '../../platform/shared/schemas.ts';
import { z } from 'zod';
import { exampleIds } from '../../platform/shared/examples.ts';

const count = (description: string) => z.number().int().min(0).meta({ description });
const major = (description: string) =>
  z
    .number()
    .min(0)
    .meta({ description: `${description}, in major units of \`currency\`` });

export const returnFileErrorSchema = z
  .object({
    line: z.number().int().min(1).meta({ description: 'Line of the file the record starts on (the column line is line 1)' }),
    column: z.string().nullable().meta({ description: 'The column at fault; null when the whole record (or the file) is' }),
    reason: z.string(),
  })
  .meta({
    id: 'DeductionReturnFileError',
    description: 'What is wrong (or, among warnings, worth a look) at one place of a deduction return file',
    example: { line: 4, column: 'amount_deducted', reason: 'has a comma that does not separate thousands (25,50): write the decimal point as a point, 25.50' },
  });

export const deductionReturnOutcomeSchema = z.enum(['confirmed', 'would_confirm', 'already_reported', 'nothing_to_confirm', 'refused']).meta({
  description:
    'confirmed: the good items became the pay date’s confirmation; would_confirm: a dry run that would; already_reported: the current ' +
    'records of the pay date already say what the file says, so nothing was (or would be) written; nothing_to_confirm: the file reports ' +
    'nothing (every item a stopped deduction with nothing deducted, or none good); refused: a dry run of a file the import would refuse',
});

export const deductionReturnReportSchema = z
  .object({
    payroll_id: z.uuid(),
    pay_date: z.iso.date(),
    pay_period: z.string(),
    currency: z.string(),
    file_version: z.number().int().min(1).meta({ description: 'The instruction file version the return answers (the current one)' }),
    file_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .meta({ description: 'SHA-256 of the file as received, hex' }),
    dry_run: z.boolean().meta({ description: 'Checked and counted only; nothing was written' }),
    partial: z.boolean().meta({ description: 'Good items are confirmed even when some are bad' }),
    outcome: deductionReturnOutcomeSchema,
    applied: z.boolean().meta({ description: 'Whether a confirmation was stored' }),
    rows: count('Item records in the file'),
    confirmed: count('Good items that are (or, in a dry run, would be) lines of the confirmation'),
    in_full: count('Of those, deducted in full'),
    partly: count('Of those, deducted in part'),
    not_deducted: count('Of those, nothing deducted'),
    over_deducted: count('Of those, more deducted than asked (held by reconciliation, to be returned)'),
    leavers: count('Of those, employees who left'),
    stops_not_deducted: count('Good items of stopped deductions with nothing deducted and no leaver: nothing to report, left out of the confirmation'),
    rejected: count('Bad item records: not confirmed'),
    requested_total: major('What the confirmed items asked'),
    deducted_total: major('What payroll deducted on the confirmed items'),
    error_count: count('Errors found in all'),
    errors_truncated: z.boolean().meta({ description: 'More errors were found than `errors` lists' }),
    errors: z.array(returnFileErrorSchema).meta({ description: 'The errors found first (at most 1,000), in line order' }),
    warnings: z.array(returnFileErrorSchema).meta({ description: 'What was taken but is worth a look (more deducted than asked), at most 1,000' }),
    confirmation_id: z.uuid().nullable().meta({ description: 'The confirmation stored; null unless applied' }),
    import_id: z.uuid().nullable().meta({ description: 'The record of this import; null unless applied' }),
    previous_import: z
      .object({ id: z.uuid(), imported_at: z.iso.datetime(), imported_by: z.string(), confirmation_id: z.uuid() })
      .nullable()
      .meta({ description: 'The last applied import of the same file (same SHA-256) for this pay date, before this one' }),
  })
  .meta({
    id: 'DeductionReturnReport',
    description: 'What a deduction return file import did, or would do (dry run): the confirmation it became, and every bad record found',
    example: {
      payroll_id: exampleIds.payroll,
      pay_date: '2026-11-27',
      pay_period: '8-2026',
      currency: 'GBP',
      file_version: 1,
      file_sha256: 'a3f5c1d2e4b6a7980c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b',
      dry_run: false,
      partial: false,
      outcome: 'confirmed',
      applied: true,
      rows: 3,
      confirmed: 3,
      in_full: 1,
      partly: 1,
      not_deducted: 1,
      over_deducted: 0,
      leavers: 1,
      stops_not_deducted: 0,
      rejected: 0,
      requested_total: 105.01,
      deducted_total: 45.01,
      error_count: 0,
      errors_truncated: false,
      errors: [],
      warnings: [],
      confirmation_id: exampleIds.confirmation,
      import_id: '7c1e1b5e-2f0a-4b7e-9d55-0d3c9c1f7a21',
      previous_import: null,
    },
  });

export type DeductionReturnReport = z.infer<typeof deductionReturnReportSchema>;

export const deductionReturnImportQuerySchema = z.strictObject({
  dry_run: queryFlagSchema.meta({ description: 'Check and report what would be confirmed; write nothing' }),
  partial: queryFlagSchema.meta({ description: 'Confirm the good items even when some are bad (they are reported); a wrong header or trailer still refuses the file' }),
});
