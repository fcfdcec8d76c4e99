import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import type { FastifyReply } from 'fastify';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import type { Caller } from '../../../platform/shared/caller.ts';
import { InvalidError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { exampleIds } from '../../../platform/shared/examples.ts';
import { pageOf, pagingQuerySchema } from '../../../platform/shared/paging.ts';
import { currencySchema, isoDateSchema, isUuid, uuidSchema } from '../../../platform/shared/schemas.ts';
import { PAYMENT_FILE_FORMATS, payoutFileColumns, type PaymentFileFormat } from '../../../settlement/payouts/payout-file.ts';
import { findPayout, listPayoutItems, listPayouts, type PayoutAudience } from '../../../settlement/payouts/payout-repository.ts';
import { markPayoutFailed, markPayoutPaid } from '../../../settlement/payouts/payout-service.ts';
import { findPaymentFile, listPaymentFilePayouts, listPaymentFiles } from '../../../settlement/payouts/payment-file-repository.ts';
import { paymentFileEnvelopeSchema, paymentFilesPageSchema, paymentFilesSchema, toPaymentFileResource } from '../../../settlement/payouts/payment-file-resource.ts';
import { latestPaymentFileOf, paymentFileDownload, writePaymentFiles, type PaymentFileDownload } from '../../../settlement/payouts/payment-file-service.ts';
import {
  payoutEnvelopeSchema,
  payoutsPageSchema,
  payoutStatusSchema,
  toPayoutResource,
  type PayoutItemRow,
  type PayoutRow,
} from '../../../settlement/payouts/payout-resource.ts';

// A non-UUID id names nothing, so it is a 404 like any other unknown id, not a validation error.
const payoutParams = z.strictObject({ payout_id: z.string() });

const listPayoutsQuery = pagingQuerySchema.extend({
  status: payoutStatusSchema.optional(),
  currency: currencySchema.optional(),
  biller_client_id: uuidSchema.optional(),
  payout_date: isoDateSchema.optional(),
});

// The date is checked in the handler, not by the query schema (whose failures are 400s), so a date
// that is not a calendar date is a 422 naming the field, like the other dates refused by a use case.
const bankFileQuery = z.strictObject({
  date: z.string().meta({ description: 'The payout date, YYYY-MM-DD', example: '2026-11-30' }),
  format: z
    .enum(PAYMENT_FILE_FORMATS)
    .optional()
    .meta({ description: '`csv` (the default) or `pain.001` for the ISO 20022 pain.001.001.09 credit transfer initiation', example: 'pain.001' }),
});

const writePaymentFilesBody = z
  .strictObject({ payout_date: z.string().meta({ description: 'The payout date whose payouts not yet in a file are to be instructed, YYYY-MM-DD' }) })
  .meta({ id: 'WritePaymentFilesRequest', description: 'The payout date to write the payment file of.', example: { payout_date: '2026-11-30' } });

const listPaymentFilesQuery = pagingQuerySchema.extend({ payout_date: isoDateSchema.optional() });

// A non-UUID id names nothing: 404, as for payouts.
const paymentFileParams = z.strictObject({ file_id: z.string() });

/** A date given as a query or body field, checked here so a bad one is a 422 naming the field. */
function payoutDateOf(value: string, pointer: string): string {
  const date = isoDateSchema.safeParse(value);
  if (!date.success) {
    throw new InvalidError('validation-failed', `${pointer.split('/').at(-1)} must be a date as YYYY-MM-DD`, {
      errors: [{ pointer, detail: 'must be a date as YYYY-MM-DD' }],
    });
  }
  return date.data;
}

/** A stored rendering as an attachment, with what identifies it: the same bytes at every download. */
function sendPaymentFile(reply: FastifyReply, download: PaymentFileDownload): FastifyReply {
  return reply
    .code(200)
    .header('content-type', download.contentType)
    .header('content-disposition', `attachment; filename="${download.fileName}"`)
    .header('payment-file-id', download.file.id)
    .header('payment-file-message-id', download.file.message_id ?? '')
    .header('repr-digest', `sha-256=:${Buffer.from(download.sha256, 'hex').toString('base64')}:`)
    .send(download.content);
}

const downloadHeadersText =
  'Headers: `Payment-File-Id` and `Payment-File-Message-Id` name the file, `Repr-Digest` carries the SHA-256 of the bytes ' + '(the `sha256` of the file resource).';

const pain001Example =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">\n' +
  '  <CstmrCdtTrfInitn>\n' +
  '    <GrpHdr><MsgId>SDPO261130-01-0193A4FA</MsgId><CreDtTm>2026-11-30T07:05:00Z</CreDtTm><NbOfTxs>1</NbOfTxs><CtrlSum>75.00</CtrlSum>' +
  '<InitgPty><Nm>Salary Deductions Collections Ltd</Nm></InitgPty></GrpHdr>\n' +
  '    <PmtInf><PmtInfId>SDPO261130-01-0193A4FA-GBP</PmtInfId><PmtMtd>TRF</PmtMtd><BtchBookg>false</BtchBookg><NbOfTxs>1</NbOfTxs>' +
  '<CtrlSum>75.00</CtrlSum><PmtTpInf><SvcLvl><Cd>NURG</Cd></SvcLvl></PmtTpInf><ReqdExctnDt><Dt>2026-11-30</Dt></ReqdExctnDt>' +
  '<Dbtr><Nm>Salary Deductions Collections Ltd</Nm></Dbtr><DbtrAcct><Id><Othr><Id>04000441234567</Id><SchmeNm><Cd>BBAN</Cd></SchmeNm></Othr></Id><Ccy>GBP</Ccy></DbtrAcct>' +
  '<DbtrAgt><FinInstnId><ClrSysMmbId><ClrSysId><Cd>GBDSC</Cd></ClrSysId><MmbId>040004</MmbId></ClrSysMmbId></FinInstnId></DbtrAgt>' +
  '<CdtTrfTxInf><PmtId><InstrId>PO2611300193A4F55E</InstrId><EndToEndId>PO2611300193A4F55E</EndToEndId></PmtId>' +
  '<Amt><InstdAmt Ccy="GBP">75.00</InstdAmt></Amt><CdtrAgt><FinInstnId><ClrSysMmbId><ClrSysId><Cd>GBDSC</Cd></ClrSysId><MmbId>601613</MmbId></ClrSysMmbId></FinInstnId></CdtrAgt>' +
  '<Cdtr><Nm>Northwind Lending Ltd</Nm></Cdtr><CdtrAcct><Id><Othr><Id>60161331926819</Id><SchmeNm><Cd>BBAN</Cd></SchmeNm></Othr></Id></CdtrAcct>' +
  '<RmtInf><Ustrd>PO2611300193A4F55E</Ustrd></RmtInf></CdtTrfTxInf></PmtInf>\n' +
  '  </CstmrCdtTrfInitn>\n' +
  '</Document>\n';

function audienceOf(caller: Caller): PayoutAudience {
  return caller.role === 'operator' ? { liveBillers: true } : { billerClientId: caller.clientId };
}

/** Operators see payouts of many billers, so their views say whose each one is. */
function payoutView(caller: Caller, row: PayoutRow, items?: readonly PayoutItemRow[]) {
  const resource = toPayoutResource(row, items);
  return caller.role === 'operator' ? { ...resource, biller_client_id: row.biller_client_id } : resource;
}

const markFailedBody = z.strictObject({ reason: z.string().trim().min(1).max(500) }).meta({
  id: 'MarkPayoutFailedRequest',
  description: 'Why the bank rejected the transfer; kept in the audit log and on the payout.',
  example: { reason: 'Returned by the bank: beneficiary account closed' },
});

// Optional, so the call without a body keeps working; the reason is kept in the audit log, as the
// CLI's --reason is (e.g. the bank statement line that shows the transfer).
const markPaidBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500).optional() })
  .meta({
    id: 'MarkPayoutPaidRequest',
    description: 'Optionally, what shows the transfer was made (such as the bank statement line); kept in the audit log.',
    example: { reason: 'Statement line 2026-11-30 PO2611300193A4F55E' },
  })
  .optional();

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

export const registerPayoutRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'POST',
    url: '/payment-files',
    operationId: 'write_payment_files',
    summary: 'Write the payment file of a payout date',
    description:
      'Operators: instructs the payouts of a date that no payment file holds yet (pending payouts of live billers; a paid or ' +
      'failed payout is never instructed) in a new payment file, numbered within the date, with its own MsgId, and stored: ' +
      'its pain.001.001.09 and CSV renderings are written once and downloaded as the same bytes ever after ' +
      '(`GET /payment-files/{file_id}/pain.001`, `.../csv`). Each payout is in one file at most (the database refuses a ' +
      'second), so payouts made after a file was written go into the next file, which holds only them. Safe to repeat, and to ' +
      'call at once: a second call waits for the first and finds nothing left, answering 200 with no file. Usually one file; ' +
      'more only when one pain.001 message cannot carry the totals (a control sum past 18 digits). ' +
      'Its execution date (ReqdExctnDt) is the payout date, or the next bank business day (England and Wales) when that is ' +
      "a weekend or bank holiday. A failed payout's money is paid by a new payout with its own reference (the EndToEndId), " +
      'filed with the payouts of its own date.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:write', roles: ['operator'] },
    body: writePaymentFilesBody,
    idempotencyKey: 'optional',
    responses: {
      201: { description: 'The payment file(s) written', schema: paymentFilesSchema },
      200: { description: 'Nothing to write: every pending live payout of the date is already in a file (`payment_files` is empty)', schema: paymentFilesSchema },
      409: { description: 'A currency of the payouts has no active collection account to pay from (nothing is written)', ...problem },
      422: { description: 'The date is not a date as YYYY-MM-DD', ...problem },
    },
    effect: async (ctx, trx) => {
      const payoutDate = payoutDateOf(ctx.body.payout_date, '/payout_date');
      const files = await writePaymentFiles(trx, payoutDate, { actor: clientActor(ctx.caller.clientId) });
      return { status: files.length > 0 ? 201 : 200, body: { payment_files: files.map((file) => toPaymentFileResource(file)) } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payment-files',
    operationId: 'list_payment_files',
    summary: 'List payment files',
    description:
      'Operators: the stored payment files, newest first, one page at a time; with `payout_date`, the files of that date ' +
      '(a date may have several: each holds the payouts not yet in a file when it was written). Number 0 of a date, ' +
      '`legacy`, records the payouts that existed before payment files were stored.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['operator'] },
    query: listPaymentFilesQuery,
    responses: { 200: { description: 'A page of payment files', schema: paymentFilesPageSchema } },
    handler: async (ctx) => {
      const { payout_date: payoutDate, ...paging } = ctx.query;
      const rows = await listPaymentFiles(deps.db, { payoutDate }, paging);
      const { items, paging: page } = pageOf(rows, paging);
      return { status: 200, body: { payment_files: items.map((row) => toPaymentFileResource(row)), paging: page } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payment-files/:file_id',
    operationId: 'get_payment_file',
    summary: 'Get a payment file',
    description: 'Operators: a stored payment file with the payouts it instructs (each with its status now).',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['operator'] },
    params: paymentFileParams,
    responses: {
      200: { description: 'The payment file', schema: paymentFileEnvelopeSchema },
      404: { description: 'Payment file not found', ...problem },
    },
    handler: async (ctx) => {
      const { file_id: fileId } = ctx.params;
      const file = isUuid(fileId) ? await findPaymentFile(deps.db, fileId) : undefined;
      if (!file) throw new NotFoundError(`Payment file ${fileId}`);
      return { status: 200, body: { payment_file: toPaymentFileResource(file, await listPaymentFilePayouts(deps.db, file.id)) } };
    },
  });

  const renderings: Array<{ format: PaymentFileFormat; summary: string; contentType: string; schema: z.ZodType }> = [
    {
      format: 'pain.001',
      summary: 'Download a payment file as pain.001',
      contentType: 'application/xml',
      schema: z.string().meta({ description: 'The stored pain.001.001.09 document', example: pain001Example }),
    },
    {
      format: 'csv',
      summary: 'Download a payment file as CSV',
      contentType: 'text/csv',
      schema: z.string().meta({
        description: 'The stored CSV: a header row, one row per payout the file instructs, money as a decimal string in major units.',
        example:
          `${payoutFileColumns.join(',')}\n` +
          `${exampleIds.payout},PO2611300193A4F55E,Northwind Lending Ltd,GBP,75.00,Northwind Lending Ltd,60-16-13,31926819,2026-11-30,pending,SDPO261130-01-0193A4FA,2026-11-30\n`,
      }),
    },
  ];
  for (const rendering of renderings) {
    defineRoute(app, {
      method: 'GET',
      url: `/payment-files/:file_id/${rendering.format}`,
      operationId: `download_payment_file_${rendering.format === 'csv' ? 'csv' : 'pain001'}`,
      summary: rendering.summary,
      description:
        `Operators: the ${rendering.format} rendering of a payment file, as an attachment named ` +
        `\`payouts-YYYY-MM-DD-NN.${rendering.format === 'csv' ? 'csv' : 'pain.001.xml'}\`: the bytes stored when the file was written, ` +
        `the same at every download. ${downloadHeadersText}`,
      tags: ['Payouts'],
      auth: { kind: 'both', scope: 'payouts:read', roles: ['operator'] },
      params: paymentFileParams,
      responses: {
        200: { description: `The stored ${rendering.format} (attachment)`, schema: rendering.schema, contentType: rendering.contentType },
        404: { description: 'Payment file not found', ...problem },
        409: { description: 'The legacy file of a date: its bytes were not kept', ...problem },
      },
      handler: async ({ params, reply }) => sendPaymentFile(reply, await paymentFileDownload(deps.db, params.file_id, rendering.format)),
    });
  }

  defineRoute(app, {
    method: 'GET',
    url: '/payouts/bank-file',
    operationId: 'get_payout_bank_file',
    summary: 'Download the latest payout bank file of a date',
    description:
      'Operators: the payment file of a payout date, as the bank file download always answered it, now a stored document. ' +
      'First the payouts of the date that no file holds yet, if any, are written into a new file (as `POST /payment-files` ' +
      "does); then the date's latest file is answered: the one just written, or, when nothing was new, the last one written " +
      'before, byte for byte as then (same MsgId and CreDtTm). So downloading twice gives the same file, and a payout is never ' +
      'in two files: a date whose payouts were made in several runs has several files, listed at ' +
      '`GET /payment-files?payout_date=` and downloaded by id. By default the CSV rendering ' +
      '(`payouts-YYYY-MM-DD-NN.csv`); with `format=pain.001`, the ISO 20022 pain.001.001.09 credit transfer initiation ' +
      '(`payouts-YYYY-MM-DD-NN.pain.001.xml`, `application/xml`) of the same file: one payment information block per ' +
      'currency, paid from its active collection account on the execution date (the payout date, or the next bank business ' +
      'day), one transfer per payout with the payout reference as InstrId, EndToEndId and remittance information. The CSV ' +
      `lists the same payouts under the same MsgId. ${downloadHeadersText} ` +
      'The same file `deductions export payouts --date D --format csv|pain.001` writes. Since it may write a file (instruct ' +
      'payouts), it needs `payouts:write`, like `POST /payment-files`; reading stored files needs only `payouts:read`.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:write', roles: ['operator'] },
    query: bankFileQuery,
    responses: {
      200: {
        description: 'The latest payment file of the date (CSV attachment)',
        schema: z.string().meta({
          description: 'CSV with a header row; one row per payout of the file, money as a decimal string in major units.',
          example:
            `${payoutFileColumns.join(',')}\n` +
            `${exampleIds.payout},PO2611300193A4F55E,Northwind Lending Ltd,GBP,75.00,Northwind Lending Ltd,60-16-13,31926819,2026-11-30,pending,SDPO261130-01-0193A4FA,2026-11-30\n`,
        }),
        contentType: 'text/csv',
        alternatives: [
          {
            contentType: 'application/xml',
            schema: z.string().meta({
              description:
                'With format=pain.001: the pain.001.001.09 document; amounts are exact decimal strings with the decimals of the currency, ' +
                'names reduced to the characters banks accept and cut to 70 characters.',
              example: pain001Example,
            }),
          },
        ],
      },
      404: { description: 'The date has no payment file and no pending live payout to write one of', ...problem },
      409: { description: 'A currency of the payouts has no active collection account to pay from (nothing is written)', ...problem },
      422: { description: 'The date is not a date as YYYY-MM-DD', ...problem },
    },
    handler: async ({ query, reply, caller }) => {
      const payoutDate = payoutDateOf(query.date, '/query/date');
      return sendPaymentFile(reply, await latestPaymentFileOf(deps.db, payoutDate, query.format ?? 'csv', { actor: clientActor(caller.clientId) }));
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payouts/:payout_id',
    operationId: 'get_payout',
    summary: 'Get a payout',
    description:
      'A payout with its items: the collections and reversals of each payment request it settles. A biller reads its ' +
      "own payouts; an operator reads any live biller's, with `biller_client_id` saying whose.",
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['biller', 'operator'] },
    params: payoutParams,
    responses: {
      200: { description: 'The payout', schema: payoutEnvelopeSchema },
      404: { description: "Payout not found (for a biller, also another biller's; for an operator, a sandbox biller's)", ...problem },
    },
    handler: async (ctx) => {
      const { payout_id: payoutId } = ctx.params;
      const payout = isUuid(payoutId) ? await findPayout(deps.db, audienceOf(ctx.caller), payoutId) : undefined;
      if (!payout) throw new NotFoundError(`Payout ${payoutId}`);
      const items = await listPayoutItems(deps.db, payout.id);
      return { status: 200, body: { payout: payoutView(ctx.caller, payout, items) } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/payouts',
    operationId: 'list_payouts',
    summary: 'List payouts',
    description:
      "Payouts, newest first, one page at a time: a biller's own, or for an operator every live biller's (sandbox " +
      'billers left out). Filter by status, currency, payout date or biller (a biller naming another biller gets an ' +
      'empty page). The items of a payout are on `GET /payouts/{payout_id}`.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['biller', 'operator'] },
    query: listPayoutsQuery,
    responses: {
      200: { description: 'A page of payouts', schema: payoutsPageSchema },
    },
    handler: async (ctx) => {
      const { status, currency, biller_client_id: billerClientId, payout_date: payoutDate, ...paging } = ctx.query;
      const rows = await listPayouts(deps.db, audienceOf(ctx.caller), { status, currency, billerClientId, payoutDate }, paging);
      const { items, paging: page } = pageOf(rows, paging);
      return { status: 200, body: { payouts: items.map((row) => payoutView(ctx.caller, row)), paging: page } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/payouts/:payout_id/paid',
    operationId: 'mark_payout_paid',
    summary: 'Record a payout as paid',
    description:
      'Operators: the bank made the transfer, so the payout goes from `pending` to `paid`. A body is optional; ' +
      'its `reason` (such as the bank statement line) is kept in the audit log with the operator who called.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:write', roles: ['operator'] },
    params: payoutParams,
    body: markPaidBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The payout, now paid', schema: payoutEnvelopeSchema },
      404: { description: "Payout not found (a sandbox biller's payout is not live data: only the simulation settles it)", ...problem },
      409: { description: 'The payout is not pending', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: {
        payout: await markPayoutPaid(trx, ctx.params.payout_id, { actor: clientActor(ctx.caller.clientId), reason: ctx.body?.reason ?? null }),
      },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/payouts/:payout_id/failed',
    operationId: 'mark_payout_failed',
    summary: 'Record a payout as failed',
    description:
      'Operators: the bank rejected the transfer, so the payout goes from `pending` to `failed`, with the ' +
      'reason. Its payment requests are paid out again by the next payout run; the audit log records the ' +
      'operator and the reason.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:write', roles: ['operator'] },
    params: payoutParams,
    body: markFailedBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The payout, now failed', schema: payoutEnvelopeSchema },
      404: { description: "Payout not found (a sandbox biller's payout is not live data: only the simulation settles it)", ...problem },
      409: { description: 'The payout is not pending', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: { payout: await markPayoutFailed(trx, ctx.params.payout_id, { actor: clientActor(ctx.caller.clientId), reason: ctx.body.reason }) },
    }),
  });
};
