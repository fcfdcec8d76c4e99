import { z } from 'zod';
import { exampleIds } from '../../platform/shared/examples.ts';
import { pagingExample, pagingResponseSchema } from '../../platform/shared/paging.ts';
import { isoInstant } from '../../platform/shared/schemas.ts';
import type { PaymentFileSummaryRow } from './payment-file-repository.ts';
import { paymentFileName, type PaymentFileFormat } from './payout-file.ts';

const EXAMPLE_FILE_ID = '0193a4fa-4d8e-7fdd-8fac-4a6b8c0d1e14';

const renderingExample = (format: PaymentFileFormat, sha256: string) => ({
  file_name: paymentFileName('2026-11-30', 1, format),
  sha256,
  href: `/payment-files/${EXAMPLE_FILE_ID}/${format}`,
});

const paymentFileExample = {
  id: EXAMPLE_FILE_ID,
  payout_date: '2026-11-30',
  number: 1,
  legacy: false,
  message_id: 'SDPO261130-01-0193A4FA',
  requested_execution_date: '2026-11-30',
  created_at: '2026-11-30T07:05:00.000Z',
  created_by: `client ${exampleIds.operator}`,
  transfers: 1,
  totals: [{ currency: 'GBP', transfers: 1, amount: 7500 }],
  pain001: renderingExample('pain.001', '9f2b5c0d3e1a4b6c8d7e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e'),
  csv: renderingExample('csv', '1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d'),
};

const renderingSchema = z
  .object({
    file_name: z.string(),
    sha256: z.string().meta({ description: 'SHA-256 of the stored bytes, lower-case hex: the download always has it' }),
    href: z.string().meta({ description: 'Where to download these bytes (operators)' }),
  })
  .meta({
    id: 'PaymentFileRendering',
    description: 'One rendering of a payment file, stored when the file was written: the same bytes at every download.',
    example: paymentFileExample.pain001,
  });

const paymentFilePayoutSchema = z
  .object({
    id: z.uuid(),
    reference: z.string().meta({ description: "The payout's reference: the transfer's InstrId and EndToEndId" }),
    biller_client_id: z.uuid(),
    currency: z.string(),
    amount: z.number().int().meta({ description: 'Integer minor units' }),
    status: z.enum(['pending', 'paid', 'failed']).meta({ description: "The payout's status now (it was pending when the file was written)" }),
  })
  .meta({
    id: 'PaymentFilePayout',
    description: 'A payout a payment file instructs.',
    example: { id: exampleIds.payout, reference: 'PO2611300193A4F55E', biller_client_id: exampleIds.biller, currency: 'GBP', amount: 7500, status: 'pending' },
  });

export const paymentFileSchema = z
  .object({
    id: z.uuid(),
    payout_date: z.iso.date(),
    number: z.number().int().meta({ description: "The file's number within its payout date: 1, 2... (0: the legacy file)" }),
    legacy: z.boolean().meta({
      description:
        'The record of the payouts that existed before payment files were stored (number 0): they were downloadable, and may ' +
        'have been sent, before; none of them is put in a new file. It has no MsgId and no bytes.',
    }),
    message_id: z.string().nullable().meta({ description: 'The pain.001 MsgId, unique to this file' }),
    requested_execution_date: z.iso.date().nullable().meta({ description: 'The pain.001 ReqdExctnDt: the payout date, or the next bank business day when it is not one' }),
    created_at: z.iso.datetime().meta({ description: 'When the file was written: its pain.001 CreDtTm' }),
    created_by: z.string().meta({ description: 'Who wrote it' }),
    transfers: z.number().int().meta({ description: 'How many payouts it instructs' }),
    totals: z.array(z.object({ currency: z.string(), transfers: z.number().int(), amount: z.number().int() })).meta({
      description: 'Per currency: how many payouts and their sum in integer minor units',
    }),
    pain001: renderingSchema.nullable(),
    csv: renderingSchema.nullable(),
    /** On GET /payment-files/{file_id} only. */
    payouts: z.array(paymentFilePayoutSchema).optional(),
  })
  .meta({
    id: 'PaymentFile',
    description:
      'A stored payment file: the bank instruction of a set of payouts, written once (pain.001.001.09 and CSV renderings of the ' +
      'same payouts, under one MsgId) and never changed. Each payout is in one file at most.',
    example: paymentFileExample,
  });

export type PaymentFileResource = z.infer<typeof paymentFileSchema>;

export const paymentFileEnvelopeSchema = z
  .object({ payment_file: paymentFileSchema })
  .meta({ id: 'PaymentFileEnvelope', description: 'One payment file, with the payouts it instructs.', example: { payment_file: paymentFileExample } });

export const paymentFilesSchema = z.object({ payment_files: z.array(paymentFileSchema) }).meta({
  id: 'PaymentFilesWritten',
  description: 'The payment files a request wrote (none when every payout was already in a file).',
  example: { payment_files: [paymentFileExample] },
});

export const paymentFilesPageSchema = z
  .object({ payment_files: z.array(paymentFileSchema), paging: pagingResponseSchema })
  .meta({ id: 'ListPaymentFilesResponse', description: 'A page of payment files, newest first.', example: { payment_files: [paymentFileExample], paging: pagingExample } });

function rendering(row: PaymentFileSummaryRow, format: PaymentFileFormat, sha256: string | null) {
  if (row.legacy || sha256 === null) return null;
  return { file_name: paymentFileName(row.payout_date, row.sequence, format), sha256, href: `/payment-files/${row.id}/${format}` };
}

export function toPaymentFileResource(
  row: PaymentFileSummaryRow,
  payouts?: ReadonlyArray<{ id: string; reference: string; biller_client_id: string; currency: string; amount: number; status: 'pending' | 'paid' | 'failed' }>,
): PaymentFileResource {
  return {
    id: row.id,
    payout_date: row.payout_date,
    number: row.sequence,
    legacy: row.legacy,
    message_id: row.message_id,
    requested_execution_date: row.requested_execution_date,
    created_at: isoInstant(row.created_at),
    created_by: row.created_by,
    transfers: row.totals.reduce((sum, total) => sum + total.transfers, 0),
    totals: row.totals,
    pain001: rendering(row, 'pain.001', row.pain001_sha256),
    csv: rendering(row, 'csv', row.csv_sha256),
    ...(payouts
      ? {
          payouts: payouts.map((payout) => ({
            id: payout.id,
            reference: payout.reference,
            biller_client_id: payout.biller_client_id,
            currency: payout.currency,
            amount: payout.amount,
            status: payout.status,
          })),
        }
      : {}),
  };
}
