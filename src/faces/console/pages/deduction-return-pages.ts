import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { reportedLimitsOf } from '../../../cycle/deduction-records/reported-limits.ts';
import { MAX_RETURN_FILE_BYTES } from '../../../cycle/deduction-returns/return-file.ts';
import { describeReturnHeadline } from '../../../cycle/deduction-returns/return-report-text.ts';
import { findCurrentInstructionFile, listReturnImports } from '../../../cycle/deduction-returns/return-repository.ts';
import type { DeductionReturnReport } from '../../../cycle/deduction-returns/return-resource.ts';
import { deductionReturnFileOf, DeductionReturnRejected, importDeductionReturn } from '../../../cycle/deduction-returns/return-service.ts';
import { instructionFileHeaders } from '../../../cycle/instructions/instruction-service.ts';
import { consoleActor } from '../../../platform/audit/audit-service.ts';
import { debouncedReconcileJobOptions, queueNames, RECONCILIATION_DEBOUNCE_MS, reconcilePayDateJob } from '../../../platform/queue/job-catalogue.ts';
import { enqueueJob } from '../../../platform/queue/job-contract.ts';
import { MalformedRequestError, NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { isoDateSchema, isUuid } from '../../../platform/shared/schemas.ts';
import { HttpProblem } from '../../http/problem.ts';
import { formatInstant } from '../console-format.ts';
import { dataTable, type ConsolePageView } from '../console-layout.ts';
import { enteredIn, type FormRefusal } from '../console-form-refusal.ts';
import { consolePermits } from '../console-permissions.ts';
import { CONSOLE_FORM_LIMIT_BYTES, verifyConsoleCsrfToken, type ConsoleContext, type ConsoleFormRoute, type ConsolePageModule } from '../console-plugin.ts';
import { html, type Html } from '../html.ts';
import { payDatePath } from './runs-pages.ts';

// A files-only payroll's report of what it deducted: the deduction return file beside each
// instruction file, downloaded pre-filled and uploaded back as the pay date's confirmation.

type PayDateParams = { payrollId: string; payDate: string };

/** Errors a result page lists; the rest are counted (the CLI's --errors-out writes every one). */
const ERRORS_SHOWN = 200;

function payDateOf(params: PayDateParams): PayDateParams {
  if (!isUuid(params.payrollId) || !isoDateSchema.safeParse(params.payDate).success) {
    throw new NotFoundError(`Payroll ${params.payrollId} pay date ${params.payDate}`);
  }
  return params;
}

/** Where a version's return file is downloaded, beside its instruction file. */
export function returnFileHref(payrollId: string, payDate: string, version: number): string {
  return `${payDatePath(payrollId, payDate)}/return-files/${version}`;
}

/** The upload form; shown again after a refusal with the boxes as they were ticked (the file is chosen again). */
function uploadForm(csrf: string, params: PayDateParams, refusal?: FormRefusal): Html {
  const action = `${payDatePath(params.payrollId, params.payDate)}/return-file`;
  const entered = enteredIn(refusal, action);
  return html`<form method="post" action="${action}" enctype="multipart/form-data" class="action">
<input type="hidden" name="_csrf" value="${csrf}">
<p><label><input type="checkbox" name="dry_run" value="1"${entered.checked('dry_run', '1')}> Check only (dry run): confirm nothing</label></p>
<p><label><input type="checkbox" name="partial" value="1"${entered.checked('partial', '1')}> Confirm the good items even when some are bad</label></p>
<label for="return-file">Deduction return file</label>
<input type="file" id="return-file" name="return_file" accept=".csv,text/csv" required${entered.invalid('return-file')}>
<button type="submit">Import return file</button>
</form>`;
}

/** What the upload of a refused file was titled and whose form it shows again. */
const RETURN_REFUSED = 'The deduction return file was not imported';

/**
 * The pay date page's section: the return file to download for the current instruction file, the
 * imports so far, and for operators the upload.
 */
export async function deductionReturnSection(context: ConsoleContext, request: FastifyRequest, reply: FastifyReply, params: PayDateParams): Promise<Html> {
  const { db } = context.deps;
  const [file, imports] = await Promise.all([findCurrentInstructionFile(db, params.payrollId, params.payDate), listReturnImports(db, params.payrollId, params.payDate)]);
  if (!file) {
    return html`<section aria-labelledby="deduction-return">
<h2 id="deduction-return">Deduction return file</h2>
<p class="empty">The pay date has no instruction file yet, so no return file either.</p>
</section>`;
  }
  const session = context.session(request);
  return html`<section aria-labelledby="deduction-return">
<h2 id="deduction-return">Deduction return file</h2>
<p>A payroll without an API reports what it deducted in the return file of the current instruction file (version ${file.file_version}):
<a href="${returnFileHref(params.payrollId, params.payDate, file.file_version)}" download>download it pre-filled</a>, write what payroll deducted in
amount_deducted (and the trailer's total_deducted), mark leavers, and import it here. It becomes the pay date's confirmation, as the provider's
API confirmation would; the same file again changes nothing.</p>
${dataTable(
  'Return files imported, newest first',
  ['Imported', 'By', 'Items', 'Confirmed', 'Bad', 'Partial', 'File SHA-256', 'Confirmation'],
  imports.map((row) => [
    formatInstant(row.imported_at),
    row.imported_by,
    row.rows,
    row.confirmed,
    row.rejected,
    row.partial ? 'yes' : 'no',
    html`<code>${row.file_sha256.slice(0, 12)}</code>`,
    row.confirmation_id,
  ]),
  'none imported.',
)}
${consolePermits(session.role, 'import_deduction_return') ? uploadForm(context.csrfToken(request, reply), params) : ''}
</section>`;
}

/**
 * A dry run's or a refused file's page: the report whole, every error with its line and column, and the
 * form again with the boxes as they were ticked (`entered`: the fields sent).
 */
function resultBody(
  context: ConsoleContext,
  request: FastifyRequest,
  reply: FastifyReply,
  params: PayDateParams,
  report: DeductionReturnReport,
  entered: Readonly<Record<string, string>>,
): Html {
  const where = (column: string | null) => column ?? '—';
  const refused = report.outcome === 'refused';
  const form = uploadForm(context.csrfToken(request, reply), params, {
    heading: RETURN_REFUSED,
    reasons: [],
    action: `${payDatePath(params.payrollId, params.payDate)}/return-file`,
    values: entered,
    fileDropped: true,
  });
  return html`<p class="${refused ? 'error' : 'notice'}" role="${refused ? 'alert' : 'status'}">${describeReturnHeadline(report)}.</p>
<dl class="facts">
<dt>Items</dt><dd>${report.rows} (${report.rejected} bad)</dd>
<dt>File SHA-256</dt><dd><code>${report.file_sha256}</code></dd>
${report.previous_import ? html`<dt>Imported before</dt><dd>${formatInstant(report.previous_import.imported_at)} by ${report.previous_import.imported_by}</dd>` : ''}
</dl>
${dataTable(
  'Worth a look (taken as they are)',
  ['Line', 'Column', 'What'],
  report.warnings.map((warning) => [warning.line, where(warning.column), warning.reason]),
  'nothing.',
)}
${dataTable(
  report.error_count > ERRORS_SHOWN ? `Errors: the first ${ERRORS_SHOWN} of ${report.error_count}` : 'Errors',
  ['Line', 'Column', 'Reason'],
  report.errors.slice(0, ERRORS_SHOWN).map((error) => [error.line, where(error.column), error.reason]),
  'none.',
)}
${
  refused
    ? html`<p>Correct the lines listed in the file${report.rejected < report.rows ? ' (or tick “Confirm the good items even when some are bad” to confirm the rest now)' : ''}, then choose the file again: it is not kept.</p>`
    : ''
}
${consolePermits(context.session(request).role, 'import_deduction_return') ? form : ''}
<p><a href="${payDatePath(params.payrollId, params.payDate)}">Back to the pay date</a></p>`;
}

const isChecked = (value: unknown) => value === '1' || value === 'on' || value === 'true';

/** Download of a return file, and the upload that imports one. */
export const registerDeductionReturnPages: ConsolePageModule = (app, context) => {
  const { db, config } = context.deps;

  app.get<{ Params: PayDateParams & { version: string } }>('/payrolls/:payrollId/pay-dates/:payDate/return-files/:version', async (request, reply) => {
    const { payrollId, payDate } = payDateOf(request.params);
    if (!/^[1-9][0-9]{0,8}$/.test(request.params.version)) throw new NotFoundError(`Instruction file version ${request.params.version}`);
    const file = await deductionReturnFileOf(db, payrollId, payDate, Number(request.params.version));
    // The same bytes, headers and digest as the providers' API and `deductions export deduction-return`.
    return reply.code(200).headers(instructionFileHeaders(file)).send(file.content);
  });

  // A refusal before the file is read (no file, two files, a pay date that takes none): the form again, the boxes as ticked.
  const returnForm: ConsoleFormRoute = {
    refused: RETURN_REFUSED,
    upload: true,
    defaultField: 'return-file',
    page: async (request, reply, refusal): Promise<ConsolePageView> => {
      const params = payDateOf(request.params as PayDateParams);
      return {
        title: `Deduction return file for pay date ${params.payDate}`,
        section: 'runs',
        body: html`${consolePermits(context.session(request).role, 'import_deduction_return') ? uploadForm(context.csrfToken(request, reply), params, refusal) : ''}
<p><a href="${payDatePath(params.payrollId, params.payDate)}">Back to the pay date</a></p>`,
      };
    },
  };

  // Multipart is read only here; the file is at most MAX_RETURN_FILE_BYTES.
  app.register(async (upload) => {
    await upload.register(multipart, { limits: { fields: 3, fieldSize: 1_024, files: 1, parts: 4, fileSize: MAX_RETURN_FILE_BYTES, headerPairs: 100 } });
    upload.post<{ Params: PayDateParams }>(
      '/payrolls/:payrollId/pay-dates/:payDate/return-file',
      { bodyLimit: CONSOLE_FORM_LIMIT_BYTES, config: { consoleCsrfInMultipart: true, consoleForm: returnForm } },
      async (request, reply) => {
        if (!request.isMultipart()) {
          // An ordinary form carries no file; its token and the role are still checked first, as for any action.
          const body = request.body as Record<string, unknown> | undefined;
          await verifyConsoleCsrfToken(app, request, typeof body?._csrf === 'string' ? body._csrf : undefined);
          context.requirePermission(request, 'import_deduction_return');
          throw new MalformedRequestError('deduction-return-missing', 'Choose a deduction return file to upload');
        }
        const params = payDateOf(request.params);
        const tooLarge = () => new HttpProblem(413, 'body-too-large', `A deduction return file may be at most ${MAX_RETURN_FILE_BYTES} bytes; this file is larger`);
        const fields: Record<string, string> = {};
        // Filled as the parts are read: a refusal shows the form again with them.
        context.keepFormValues(request, fields);
        let content: Buffer | undefined;
        let session: ReturnType<typeof context.requirePermission> | undefined;
        try {
          // The form puts its token (and the check boxes) before the file: checked before any byte of the file is read.
          for await (const part of request.parts()) {
            if (part.type === 'field') {
              if (typeof part.value === 'string') fields[part.fieldname] = part.value;
              continue;
            }
            await verifyConsoleCsrfToken(app, request, fields._csrf);
            session = context.requirePermission(request, 'import_deduction_return');
            if (part.fieldname !== 'return_file' || content !== undefined) throw new MalformedRequestError('deduction-return-missing', 'Upload one deduction return file');
            content = await part.toBuffer();
          }
        } catch (error) {
          throw (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE' ? tooLarge() : error;
        }
        await verifyConsoleCsrfToken(app, request, fields._csrf);
        session ??= context.requirePermission(request, 'import_deduction_return');
        if (content === undefined || content.length === 0) throw new MalformedRequestError('deduction-return-missing', 'Choose a deduction return file to upload');
        const file = content;

        let report: DeductionReturnReport;
        try {
          report = await db.transaction().execute((trx) =>
            importDeductionReturn(trx, {
              payrollId: params.payrollId,
              payDate: params.payDate,
              content: file,
              dryRun: isChecked(fields.dry_run),
              partial: isChecked(fields.partial),
              submitter: { kind: 'operator', actor: consoleActor(session.email) },
              limits: reportedLimitsOf(config),
            }),
          );
        } catch (error) {
          if (!(error instanceof DeductionReturnRejected)) throw error;
          return context.page(request, reply, {
            title: `Deduction return file for pay date ${params.payDate}`,
            section: 'runs',
            status: 422,
            body: resultBody(context, request, reply, params, error.report, fields),
          });
        }
        if (report.applied) {
          // Reconciled a few seconds later by the workers, as after the provider's own confirmation.
          const queue = await context.queues.queue(queueNames.payDates);
          await enqueueJob(
            queue,
            reconcilePayDateJob,
            { payrollId: report.payroll_id, payDate: report.pay_date },
            debouncedReconcileJobOptions(report.payroll_id, report.pay_date, RECONCILIATION_DEBOUNCE_MS),
          );
          return context.redirectWithNotice(reply, payDatePath(params.payrollId, params.payDate), `${describeReturnHeadline(report)}.`);
        }
        return context.page(request, reply, {
          title: `Deduction return file for pay date ${params.payDate}`,
          section: 'runs',
          body: resultBody(context, request, reply, params, report, fields),
        });
      },
    );
  });
};
