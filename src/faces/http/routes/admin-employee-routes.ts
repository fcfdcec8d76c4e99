import { randomUUID } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import { parseIdempotencyKey } from '../../../platform/idempotency/idempotency-service.ts';
import type { RouteModule } from '../app.ts';
import { contentDigestSha256 } from '../content-digest.ts';
import { HttpProblem, problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { isCsv, withinLimit } from '../streamed-body.ts';
import { pagingQuerySchema, pagingResponseSchema } from '../../../platform/shared/paging.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import { employmentStatusSchema } from '../../../directory/payroll-providers/reference-schemas.ts';
import { employeeEnvelopeSchema, employeeRecordRequestSchema, employeeResourceSchema } from '../../../directory/payrolls/employee-resource.ts';
import {
  createEmployeeOnPayroll,
  employeeChangesSchema,
  listPayrollEmployees,
  recordLeaver,
  showEmployeeOnPayroll,
  updateEmployeeOnPayroll,
} from '../../../collections/employee-changes/employee-admin-service.ts';
import { openImportErrorFile } from '../../../directory/payrolls/employee-import-error-file.ts';
import { employeeImportErrorsCsvSchema, employeeImportQuerySchema, employeeImportReportSchema } from '../../../directory/payrolls/employee-import-resource.ts';
import { EMPLOYEE_IMPORT_COLUMNS } from '../../../directory/payrolls/employee-import-rules.ts';
import { EmployeeImportRejected, importEmployees } from '../../../collections/employee-changes/employee-import-service.ts';

/** A file of 500,000 employees is some 80 MB; the limit leaves room for long names and addresses. */
export const EMPLOYEE_IMPORT_BODY_LIMIT_BYTES = 256 * 1024 * 1024;

// Non-UUID ids name nothing, so they are 404s like any other unknown id (the services check).
const payrollParams = z.strictObject({ payroll_id: z.string() });
const employeeParams = z.strictObject({ payroll_id: z.string(), employee_id: z.string() });

const reasonSchema = z.string().trim().min(1).max(500).optional().meta({ description: 'Why, kept in the audit log' });

const exampleEmployee = {
  given_name: 'Priya',
  family_name: 'Shah',
  national_registration_number: 'QQ123456C',
  date_of_birth: '1990-05-17',
  email_address: 'priya.shah@example.com',
  postal_code: 'LS1 4AP',
  payroll_reference: 'WN-1042',
  start_date: '2023-09-01',
  employment_status: 'active',
  contract_type: 'full_time',
  annualised_salary: 4_200_000,
};

const createBody = z.strictObject({ employee: employeeRecordRequestSchema.shape.employee, reason: reasonSchema }).meta({
  id: 'AdminEmployeeCreateRequest',
  description: 'An employee and its employment on the payroll, as a provider pushes it (annualised_salary in minor units)',
  example: { employee: exampleEmployee, reason: 'New starter, HR ticket 4411' },
});

const updateBody = z.strictObject({ employee: employeeChangesSchema, reason: reasonSchema }).meta({
  id: 'AdminEmployeeUpdateRequest',
  description: 'The fields to change; null clears an optional field, a field left out stays as it is',
  example: { employee: { family_name: 'Shah-Patel', annualised_salary: 4_500_000 }, reason: 'Pay rise from April' },
});

const leaveBody = z.strictObject({ end_date: isoDateSchema.meta({ description: 'The last day of the employment' }), reason: reasonSchema }).meta({
  id: 'AdminEmployeeLeaveRequest',
  description: 'The employee left the employment on end_date',
  example: { end_date: '2026-03-31', reason: 'Resigned' },
});

const employeesPageSchema = z.object({ employees: z.array(employeeResourceSchema), paging: pagingResponseSchema }).meta({
  id: 'AdminEmployeesPage',
  description: "A page of a payroll's employees, newest employment first",
  example: {
    employees: [
      {
        id: '5f0c8a52-3c1e-4a53-9d2e-0a6c1b7e4f10',
        payroll_id: '0b9a3f0e-8a55-4a63-9a1a-3f1e2d4c5b6a',
        ...exampleEmployee,
        phone_number: null,
        end_date: null,
        currency: 'GBP',
        created_at: '2026-11-25T09:00:00.000Z',
        updated_at: '2026-11-25T09:00:00.000Z',
      },
    ],
    paging: { limit: 50, after: null, before: null },
  },
});

const listQuery = pagingQuerySchema.extend({ status: employmentStatusSchema.optional() });

const importQuery = employeeImportQuerySchema.extend({ reason: reasonSchema });

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const admin = (scope: 'admin:read' | 'admin:write') => ({ kind: 'both', scope, roles: ['operator'] }) as const;

const acceptsCsv = (accept: string | undefined) => (accept ?? '').split(',').some((range) => isCsv(range));

/**
 * Imports whose caller asked for every bad row: the file the errors were spooled to during the
 * import, complete, and the answer the report would have had (200, or the 422 of a rejection).
 * The scope's onSend hook answers the file instead, and removes it.
 */
const spooledErrors = new WeakMap<FastifyRequest, string>();

const errorsCsv = [{ contentType: 'text/csv', schema: employeeImportErrorsCsvSchema }];

export const registerAdminEmployeeRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/admin/payrolls/:payroll_id/employees',
    operationId: 'admin_list_employees',
    summary: "List a payroll's employees",
    description: "Operators: a payroll's employees with their employments, newest first, optionally by employment status",
    tags: ['Administration'],
    auth: admin('admin:read'),
    params: payrollParams,
    query: listQuery,
    responses: {
      200: { description: 'A page of employees', schema: employeesPageSchema },
      400: { description: 'Invalid query or cursor', ...problem },
      404: { description: 'Payroll not found', ...problem },
    },
    handler: async (ctx) => {
      const { status, ...paging } = ctx.query;
      return { status: 200, body: await listPayrollEmployees(deps.db, ctx.params.payroll_id, { status }, paging) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/payrolls/:payroll_id/employees/:employee_id',
    operationId: 'admin_get_employee',
    summary: 'Get an employee on a payroll',
    description: 'Operators: one employee and its employment on the payroll',
    tags: ['Administration'],
    auth: admin('admin:read'),
    params: employeeParams,
    responses: {
      200: { description: 'The employee', schema: employeeEnvelopeSchema },
      404: { description: 'Payroll not found, or the employee is not on it', ...problem },
    },
    handler: async (ctx) => ({
      status: 200,
      body: { employee: await showEmployeeOnPayroll(deps.db, ctx.params.payroll_id, ctx.params.employee_id) },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/employees',
    operationId: 'admin_create_employee',
    summary: 'Add an employee to a payroll',
    description:
      "Operators: add an employee to a payroll (the provider's employee with the same national registration number, date of birth and family name gets a second employment); audited",
    tags: ['Administration'],
    auth: admin('admin:write'),
    params: payrollParams,
    body: createBody,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The employee on the payroll', schema: employeeEnvelopeSchema },
      400: { description: 'Missing or invalid Idempotency-Key', ...problem },
      404: { description: 'Payroll not found', ...problem },
      409: { description: 'The payroll reference or national registration number belongs to another employee', ...problem },
      422: { description: 'Invalid employee record', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 201,
      body: {
        employee: await createEmployeeOnPayroll(trx, ctx.params.payroll_id, ctx.body.employee, {
          actor: clientActor(ctx.caller.clientId),
          reason: ctx.body.reason ?? null,
        }),
      },
    }),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/admin/payrolls/:payroll_id/employees/:employee_id',
    operationId: 'admin_update_employee',
    summary: 'Change an employee on a payroll',
    description:
      "Operators: change an employee's record on a payroll; billers holding mandates hear of it and a status change moves their mandates, as a provider's push does; audited",
    tags: ['Administration'],
    auth: admin('admin:write'),
    params: employeeParams,
    body: updateBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The employee as it is now', schema: employeeEnvelopeSchema },
      400: { description: 'Invalid Idempotency-Key', ...problem },
      404: { description: 'Payroll not found, or the employee is not on it', ...problem },
      409: { description: 'The payroll reference or national registration number belongs to another employee', ...problem },
      422: { description: 'Invalid changes', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: {
        employee: await updateEmployeeOnPayroll(trx, ctx.params.payroll_id, ctx.params.employee_id, ctx.body.employee, {
          actor: clientActor(ctx.caller.clientId),
          reason: ctx.body.reason ?? null,
        }),
      },
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/payrolls/:payroll_id/employees/:employee_id/leave',
    operationId: 'admin_record_leaver',
    summary: 'Record a leaver',
    description:
      'Operators: the employee left on end_date; as for a leaver pushed by the provider, running mandates end and their pending payment requests are cancelled; audited',
    tags: ['Administration'],
    auth: admin('admin:write'),
    params: employeeParams,
    body: leaveBody,
    idempotencyKey: 'required',
    responses: {
      200: { description: 'The employee, now a leaver', schema: employeeEnvelopeSchema },
      400: { description: 'Missing or invalid Idempotency-Key', ...problem },
      404: { description: 'Payroll not found, or the employee is not on it', ...problem },
      409: { description: 'The employee is already a leaver', ...problem },
      422: { description: 'Invalid end date', ...problem },
    },
    effect: async (ctx, trx) => ({
      status: 200,
      body: {
        employee: await recordLeaver(trx, ctx.params.payroll_id, ctx.params.employee_id, ctx.body.end_date, {
          actor: clientActor(ctx.caller.clientId),
          reason: ctx.body.reason ?? null,
        }),
      },
    }),
  });

  // The file is streamed to the parser, never held whole: only this route reads text/csv, and
  // reads nothing else.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('text/csv', (_request, payload, done) => done(null, payload));
    scope.addHook('onSend', async (request, reply, payload) => {
      const path = spooledErrors.get(request);
      if (path === undefined) return payload;
      spooledErrors.delete(request);
      if (reply.statusCode !== 200 && reply.statusCode !== 422) {
        await rm(path, { force: true });
        return payload;
      }
      // Unlinked once open: the handle keeps the data readable until the stream ends or is cut off,
      // and nothing is left on disk whatever happens to the response.
      const file = await open(path);
      await rm(path, { force: true });
      reply.header('content-type', 'text/csv; charset=utf-8');
      reply.removeHeader('content-length');
      return file.createReadStream();
    });
    scope.addHook('onResponse', async (request) => {
      const path = spooledErrors.get(request);
      if (path === undefined) return;
      spooledErrors.delete(request);
      await rm(path, { force: true });
    });
    defineRoute(scope, {
      method: 'POST',
      url: '/admin/payrolls/:payroll_id/employees/import',
      operationId: 'admin_import_employees',
      summary: "Import a payroll's employees (CSV)",
      description:
        "Operators: import a payroll's employees and employments from a CSV file (text/csv), upserting by payroll reference; dry_run validates only; every error of every row is found in one pass, and nothing is applied unless partial; an empty cell keeps what is stored, and what a row says goes to this payroll's employment (the person's national registration number and date of birth aside), so another payroll's import never undoes it; the same file again changes nothing and records no import run or audit entry.\n\n" +
        'The JSON report lists the first 1,000 errors and counts the rest (errors_truncated). To get every bad row, ask for `errors=all` (or send `Accept: text/csv`): the answer is then a text/csv body, `line,column,reason` after a header line, with the status the report would have had (200 for a dry run or an applied import, 422 when rejected). It is spooled to a temporary file during the import, so any number of bad rows take constant memory, and the file is removed afterwards. Such a request takes no Idempotency-Key: the full list is not kept for replays, and sending the same file again is safe.',
      tags: ['Administration'],
      auth: admin('admin:write'),
      bodyLimit: EMPLOYEE_IMPORT_BODY_LIMIT_BYTES,
      streamedBody: {
        contentType: 'text/csv',
        description: `A header line naming the columns (${EMPLOYEE_IMPORT_COLUMNS.join(', ')}; payroll_reference, given_name, family_name and employment_status required), then one row per employee; annualised_salary in major units (42000.50), national_registration_number a National Insurance number HMRC could issue, employment_status, contract_type and currency in any case; an empty cell keeps what is stored`,
        example:
          'payroll_reference,given_name,family_name,national_registration_number,date_of_birth,start_date,end_date,employment_status,contract_type,annualised_salary\n' +
          'WN-1042,Priya,Shah,AB123456C,1990-05-17,2023-09-01,,active,full_time,42000.00\n' +
          'WN-1043,Tom,Evans,CE654321A,1985-11-02,2019-04-01,2026-03-31,leaver,part_time,18500.50\n',
      },
      params: payrollParams,
      query: importQuery,
      // With a key, the fingerprint is the Content-Digest the caller states (see effect-runner.ts),
      // and the file is held to it: a key reused with another file is a 422 (idempotency-key-reused),
      // never a replay.
      idempotencyKey: 'optional',
      responses: {
        200: {
          description: 'What was imported, or would be (dry run), with the first bad rows; or, with errors=all, every bad row as text/csv',
          schema: employeeImportReportSchema,
          alternatives: errorsCsv,
        },
        400: {
          description:
            'Invalid query or Idempotency-Key; an Idempotency-Key with errors=all; an Idempotency-Key without the Content-Digest (sha-256) of the file, or a file that is not the one its Content-Digest names (nothing imported)',
          ...problem,
        },
        404: { description: 'Payroll not found', ...problem },
        409: { description: 'A request with this Idempotency-Key is still being processed', ...problem },
        413: { description: 'The file is larger than 256 MB', ...problem },
        415: { description: 'The body is not text/csv', ...problem },
        422: {
          description:
            'The file has bad rows and partial application was not asked for (errors lists the first 1,000 at /lines/{line}/{column}, or with errors=all every bad row as text/csv; nothing applied), or the header or CSV itself is invalid (always a problem)',
          ...problem,
          alternatives: errorsCsv,
        },
      },
      effect: async (ctx, trx) => {
        const declared = Number(ctx.request.headers['content-length'] ?? 0);
        if (!isCsv(ctx.request.headers['content-type']) || !(ctx.request.body instanceof Readable)) {
          throw new HttpProblem(415, 'unsupported-media-type', 'Send the file as text/csv');
        }
        if (declared > EMPLOYEE_IMPORT_BODY_LIMIT_BYTES) {
          throw new HttpProblem(413, 'body-too-large', `An import file may be at most ${EMPLOYEE_IMPORT_BODY_LIMIT_BYTES} bytes`);
        }
        const allErrors = ctx.query.errors === 'all' || acceptsCsv(ctx.request.headers.accept);
        if (allErrors && parseIdempotencyKey(ctx.request.headers['idempotency-key']) !== undefined) {
          throw new HttpProblem(
            400,
            'idempotency-key-with-all-errors',
            'The full error list is not kept for replays: ask for it without an Idempotency-Key (the same file again changes nothing)',
            {
              errors: [{ pointer: '/headers/idempotency-key', detail: 'must be left out with errors=all or Accept: text/csv' }],
            },
          );
        }
        const spool = allErrors ? await openImportErrorFile(join(tmpdir(), `employee-import-errors-${randomUUID()}.csv`)) : undefined;
        let answered = false;
        try {
          const report = await importEmployees(trx, {
            payrollId: ctx.params.payroll_id,
            source: Readable.from(withinLimit(ctx.request.body as Readable, EMPLOYEE_IMPORT_BODY_LIMIT_BYTES, 'An import file')),
            dryRun: ctx.query.dry_run,
            partial: ctx.query.partial,
            actor: clientActor(ctx.caller.clientId),
            reason: ctx.query.reason ?? null,
            errorSink: spool,
          });
          const stated = contentDigestSha256(ctx.request.headers['content-digest']);
          if (stated && stated !== report.file_sha256) {
            // Thrown inside the effect's transaction: whatever the file did is rolled back.
            throw new HttpProblem(400, 'content-digest-mismatch', 'The file is not the one its Content-Digest names; nothing was imported', {
              errors: [{ pointer: '/headers/content-digest', detail: `the body's SHA-256 is ${report.file_sha256}` }],
            });
          }
          if (spool) {
            await spool.close();
            spooledErrors.set(ctx.request, spool.path);
            answered = true;
          }
          return { status: 200, body: report };
        } catch (error) {
          if (spool && error instanceof EmployeeImportRejected) {
            await spool.close();
            spooledErrors.set(ctx.request, spool.path);
            answered = true;
          }
          throw error;
        } finally {
          if (spool && !answered) await spool.discard();
        }
      },
    });
  });
};
