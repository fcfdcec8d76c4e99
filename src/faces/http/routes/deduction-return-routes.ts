import { Readable } from 'node:stream';
import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { contentDigestSha256 } from '../content-digest.ts';
import { HttpProblem, problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { isCsv, withinLimit } from '../streamed-body.ts';
import { requireProvidersPayroll } from '../../../cycle/deduction-data/deduction-data-service.ts';
import { reportedLimitsOf } from '../../../cycle/deduction-records/reported-limits.ts';
import { deductionReturnColumns, MAX_RETURN_FILE_BYTES } from '../../../cycle/deduction-returns/return-file.ts';
import { deductionReturnImportQuerySchema, deductionReturnReportSchema } from '../../../cycle/deduction-returns/return-resource.ts';
import { deductionReturnFileOf, importDeductionReturn } from '../../../cycle/deduction-returns/return-service.ts';
import { sha256Hex } from '../../../cycle/instructions/instruction-file.ts';
import { instructionFileHeaders } from '../../../cycle/instructions/instruction-service.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';

const DEDUCTION_RETURN_BODY_LIMIT_BYTES = MAX_RETURN_FILE_BYTES;

const payDateParams = z.strictObject({ payroll_id: z.string(), pay_date: isoDateSchema });
const RETURN_FILE_URL = '/payrolls/:payroll_id/pay-dates/:pay_date/deduction-return-file';
const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };

const EXAMPLE = [
  deductionReturnColumns.join(','),
  'header,,,,,,,GBP,8-2026,2026-11-27,Acme Widgets Ltd,EMP-0042,Acme monthly,ACME-MONTHLY,1,,,',
  'item,W1001,SD00000017,new,50.00,50.00,no,GBP,8-2026,2026-11-27,,,,,,,,',
  'item,W1003,SD00000019,continue,10.00,4.50,no,GBP,8-2026,2026-11-27,,,,,,,,',
  'item,W1004,SD00000020,amend,25.50,0.00,yes,GBP,8-2026,2026-11-27,,,,,,,,',
  'trailer,,,,,,,GBP,,,,,,,,3,85.50,54.50',
  '',
].join('\r\n');

async function readWhole(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of withinLimit(body, DEDUCTION_RETURN_BODY_LIMIT_BYTES, 'A deduction return file')) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The deduction return file: handed out pre-filled beside the instruction file, and taken back as the pay date's confirmation. */
export const registerDeductionReturnRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: RETURN_FILE_URL,
    operationId: 'get_deduction_return_file',
    summary: 'Download a deduction return file',
    description:
      'Payroll providers: the deduction return file of a payroll pay date, pre-filled: every item of its instruction file with ' +
      '`amount_deducted` equal to the amount asked and `leaver` no, as a CSV attachment with a `Digest` header; the newest ' +
      'version unless `version` names an earlier one. Payroll writes what it deducted and sends it back (POST).',
    tags: ['Salary deduction exchange'],
    auth: { kind: 'either', scope: 'deduction_data:request', roles: ['payroll_provider'] },
    params: payDateParams,
    query: z.strictObject({ version: z.coerce.number().int().positive().optional() }),
    responses: {
      200: {
        description: 'The deduction return file',
        schema: z.string().meta({
          description: 'CSV: a column line, a header record, one item per instruction item, a trailer; money as decimal strings in major units.',
          example: EXAMPLE,
        }),
        contentType: 'text/csv',
      },
      404: { description: 'No such payroll, pay date or instruction file', ...problem },
    },
    handler: async ({ params, query, caller, reply }) => {
      await requireProvidersPayroll(deps.db, caller, params.payroll_id);
      const file = await deductionReturnFileOf(deps.db, params.payroll_id, params.pay_date, query.version);
      return reply.code(200).headers(instructionFileHeaders(file)).send(file.content);
    },
  });

  // Only this route reads text/csv, and reads nothing else.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));
    defineRoute(scope, {
      method: 'POST',
      url: RETURN_FILE_URL,
      operationId: 'import_deduction_return_file',
      summary: 'Send back a deduction return file',
      description:
        'Payroll providers: what payroll deducted on a pay date, as the deduction return file (text/csv) of its current instruction file. ' +
        'It becomes the pay date’s confirmation exactly as `POST /deductions/{payroll_id}/confirmation` would: one new record version per ' +
        'employee, the snapshot confirmed, the pay date reconciled. The file is checked whole first and every fault is listed with its line ' +
        'and column; nothing is confirmed unless `partial` (which confirms the good items; a wrong header or trailer still refuses the ' +
        'file). `dry_run` checks and reports only. A file whose items the current records already say changes nothing (`already_reported`). ' +
        'With an Idempotency-Key, send the file’s `Content-Digest` (sha-256).',
      tags: ['Salary deduction exchange'],
      auth: { kind: 'both', scope: 'deduction_data:submit', roles: ['payroll_provider'] },
      bodyLimit: DEDUCTION_RETURN_BODY_LIMIT_BYTES,
      streamedBody: {
        contentType: 'text/csv',
        description: `The deduction return file: ${deductionReturnColumns.join(', ')}; amounts in major units (25.50)`,
        example: EXAMPLE,
      },
      params: payDateParams,
      query: deductionReturnImportQuerySchema,
      idempotencyKey: 'optional',
      responses: {
        200: { description: 'A dry run, or nothing to write: what would be (or already is) confirmed, and every bad record', schema: deductionReturnReportSchema },
        201: { description: 'Confirmed: the good items are the pay date’s confirmation', schema: deductionReturnReportSchema },
        400: { description: 'Invalid query or Idempotency-Key, or a file that is not the one its Content-Digest names (nothing confirmed)', ...problem },
        404: { description: 'Unknown payroll or pay date, or another provider’s payroll', ...problem },
        409: {
          description: 'The pay date has no instruction file yet (not locked), or a re-run superseded its deduction data meanwhile, or an Idempotency-Key still in progress',
          ...problem,
        },
        413: { description: 'The file is larger than 32 MB', ...problem },
        415: { description: 'The body is not text/csv', ...problem },
        422: {
          description: 'The file is refused (type deduction-return-rejected): `errors` names every fault at /lines/{line}/{column}; or a reported amount over a limit',
          ...problem,
        },
      },
      effect: async (ctx, trx) => {
        if (!isCsv(ctx.request.headers['content-type']) || !(ctx.request.body instanceof Readable)) {
          throw new HttpProblem(415, 'unsupported-media-type', 'Send the deduction return file as text/csv');
        }
        if (Number(ctx.request.headers['content-length'] ?? 0) > DEDUCTION_RETURN_BODY_LIMIT_BYTES) {
          throw new HttpProblem(413, 'body-too-large', `A deduction return file may be at most ${DEDUCTION_RETURN_BODY_LIMIT_BYTES} bytes`);
        }
        const content = await readWhole(ctx.request.body);
        const stated = contentDigestSha256(ctx.request.headers['content-digest']);
        const digest = sha256Hex(content);
        if (stated && stated !== digest) {
          throw new HttpProblem(400, 'content-digest-mismatch', 'The file is not the one its Content-Digest names; nothing was confirmed', {
            errors: [{ pointer: '/headers/content-digest', detail: `the body's SHA-256 is ${digest}` }],
          });
        }
        const report = await importDeductionReturn(trx, {
          payrollId: ctx.params.payroll_id,
          payDate: ctx.params.pay_date,
          content,
          dryRun: ctx.query.dry_run,
          partial: ctx.query.partial,
          submitter: { kind: 'provider', caller: ctx.caller },
          limits: reportedLimitsOf(deps.config),
        });
        if (!report.applied) return { status: 200, body: report };
        return { status: 201, body: report, afterCommit: () => deps.reconciliation.request(report.payroll_id, report.pay_date) };
      },
    });
  });
};
