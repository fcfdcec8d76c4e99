import { queryFlagSchema } from '../../platform/shared/schemas.ts';
import { z } from 'zod';
import { importErrorSchema } from './employee-import-rules.ts';

const count = (description: string) => z.number().int().min(0).meta({ description });

export const employeeImportReportSchema = z
  .object({
    payroll_id: z.uuid(),
    file_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .meta({ description: 'SHA-256 of the file as received, hex' }),
    dry_run: z.boolean().meta({ description: 'Validated and counted only; nothing was applied' }),
    partial: z.boolean().meta({ description: 'Good rows are applied even when some rows are bad' }),
    applied: z.boolean().meta({ description: 'Whether the good rows were written (false for a dry run)' }),
    rows: count('Data rows in the file (the header not counted)'),
    created: count('Rows that add an employment to the payroll (and the employee, when new to the provider)'),
    updated: count('Rows that change an existing employment or its employee'),
    unchanged: count('Rows equal to what is stored: nothing written'),
    left: count('Existing employments that became leavers (included in updated)'),
    rejected: count('Bad rows: not applied'),
    error_count: count('Errors found in all (a bad row may have several)'),
    errors_truncated: z.boolean().meta({ description: 'More errors were found than `errors` lists; ask for `errors=all` (text/csv) to get every one' }),
    errors: z.array(importErrorSchema).meta({ description: 'The errors found first (at most 1,000), in line order' }),
    import_id: z
      .uuid()
      .nullable()
      .meta({ description: 'The record of this import run; null unless applied and something changed (a file that changes nothing leaves no record and no audit entry)' }),
    previous_import: z
      .object({ id: z.uuid(), finished_at: z.iso.datetime(), imported_by: z.string() })
      .nullable()
      .meta({ description: 'The last applied import of the same file into this payroll, before this one' }),
  })
  .meta({
    id: 'EmployeeImportReport',
    description: 'What an employee import did, or would do (dry run), and every bad row found',
    example: {
      payroll_id: '0b9a3f0e-8a55-4a63-9a1a-3f1e2d4c5b6a',
      file_sha256: 'a3f5c1d2e4b6a7980c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b',
      dry_run: false,
      partial: true,
      applied: true,
      rows: 3,
      created: 1,
      updated: 1,
      unchanged: 0,
      left: 1,
      rejected: 1,
      error_count: 1,
      errors_truncated: false,
      errors: [{ line: 4, column: 'date_of_birth', reason: 'must be a date as YYYY-MM-DD' }],
      import_id: '7c1e1b5e-2f0a-4b7e-9d55-0d3c9c1f7a21',
      previous_import: null,
    },
  });

export type EmployeeImportReport = z.infer<typeof employeeImportReportSchema>;

export const employeeImportQuerySchema = z.strictObject({
  dry_run: queryFlagSchema.meta({ description: 'Validate and report what would change; apply nothing' }),
  partial: queryFlagSchema.meta({ description: 'Apply the good rows even when some rows are bad (they are reported)' }),
  errors: z
    .enum(['all'])
    .optional()
    .meta({ description: 'all: answer every bad row as a text/csv body (line,column,reason) instead of the JSON report; as does Accept: text/csv' }),
});

/** The answer to `errors=all`: every bad row, streamed. */
export const employeeImportErrorsCsvSchema = z.string().meta({
  id: 'EmployeeImportErrorsCsv',
  description:
    'Every bad row of an import file, one per line after a header line (line,column,reason), in line order; rows repeating an earlier one last. column is empty when the whole row is at fault',
  example: 'line,column,reason\n4,date_of_birth,must be a date as YYYY-MM-DD\n9,payroll_reference,repeats the payroll reference of line 3\n',
});
