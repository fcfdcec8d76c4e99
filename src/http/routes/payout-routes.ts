import { z } from 'zod';
import { clientActor } from '../../audit/audit-service.ts';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import type { Caller } from '../../shared/caller.ts';
import { InvalidError, NotFoundError } from '../../shared/domain-errors.ts';
import { exampleIds } from '../../shared/examples.ts';
import { pageOf, pagingQuerySchema } from '../../shared/paging.ts';
import { currencySchema, isoDateSchema, isUuid, uuidSchema } from '../../shared/schemas.ts';
import { payoutFileColumns } from '../../payouts/payout-file.ts';
import { findPayout, listPayoutItems, listPayouts, type PayoutAudience } from '../../payouts/payout-repository.ts';
import { markPayoutFailed, markPayoutPaid, PAYOUT_BANK_FILE_FORMATS, payoutBankFileIn } from '../../payouts/payout-service.ts';
import {
  payoutEnvelopeSchema,
  payoutsPageSchema,
  payoutStatusSchema,
  toPayoutResource,
  type PayoutItemRow,
  type PayoutRow,
} from '../../payouts/payout-resource.ts';


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
    .enum(PAYOUT_BANK_FILE_FORMATS)
    .optional()
    .meta({ description: '`csv` (the default) or `pain.001` for the ISO 20022 pain.001.001.09 credit transfer initiation', example: 'pain.001' }),
});

const pain001Example =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09">\n' +
  '  <CstmrCdtTrfInitn>\n' +
  '    <GrpHdr><MsgId>SDPO2611307C1E09A2</MsgId><CreDtTm>2026-11-30T07:05:00Z</CreDtTm><NbOfTxs>1</NbOfTxs><CtrlSum>75.00</CtrlSum>' +
  '<InitgPty><Nm>Salary Deductions Collections Ltd</Nm></InitgPty></GrpHdr>\n' +
  '    <PmtInf><PmtInfId>SDPO2611307C1E09A2-GBP</PmtInfId><PmtMtd>TRF</PmtMtd><BtchBookg>false</BtchBookg><NbOfTxs>1</NbOfTxs>' +
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

const markFailedBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500) })
  .meta({
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
    method: 'GET',
    url: '/payouts/bank-file',
    operationId: 'get_payout_bank_file',
    summary: 'Download the payout bank file',
    description:
      'Operators: the bank payment file of the live payouts made on a date, one transfer per payout with money as a ' +
      'decimal string. By default the CSV, as an attachment named `payouts-YYYY-MM-DD.csv` (a date without payouts ' +
      'gives the header row alone). With `format=pain.001`, the ISO 20022 pain.001.001.09 credit transfer initiation ' +
      'the bank imports, as `payouts-YYYY-MM-DD.pain.001.xml` (`application/xml`): one payment information block per ' +
      'currency, paid from its active collection account on the payout date, one transfer per payout with the payout ' +
      'reference as end-to-end id and remittance information, and a MsgId that stays the same while the payouts of the ' +
      'date do. The same file `deductions export payouts --date D --format csv|pain.001` writes.',
    tags: ['Payouts'],
    auth: { kind: 'both', scope: 'payouts:read', roles: ['operator'] },
    query: bankFileQuery,
    responses: {
      200: {
        description: 'The payout bank file (CSV attachment)',
        schema: z.string().meta({
          description: 'CSV with a header row; one row per payout, money as a decimal string in major units.',
          example:
            `${payoutFileColumns.join(',')}\n` +
            `${exampleIds.payout},PO2611300193A4F55E,Northwind Lending Ltd,GBP,75.00,Northwind Lending Ltd,60-16-13,31926819,2026-11-30,pending\n`,
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
      404: { description: 'With format=pain.001: no live payout was made on the date (a pain.001 file holds at least one transfer)', ...problem },
      409: { description: 'With format=pain.001: a currency of the payouts has no active collection account to pay from', ...problem },
      422: { description: 'The date is not a date as YYYY-MM-DD', ...problem },
    },
    handler: async ({ query, reply }) => {
      const date = isoDateSchema.safeParse(query.date);
      if (!date.success) {
        throw new InvalidError('validation-failed', 'date must be a date as YYYY-MM-DD', {
          errors: [{ pointer: '/query/date', detail: 'must be a date as YYYY-MM-DD' }],
        });
      }
      const file = await payoutBankFileIn(deps.db, date.data, query.format ?? 'csv');
      return reply
        .code(200)
        .header('content-type', file.contentType)
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .send(file.content);
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
