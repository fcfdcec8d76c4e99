import { Readable } from 'node:stream';
import { z } from 'zod';
import { clientActor } from '../../../platform/audit/audit-service.ts';
import {
  bankCreditSchema,
  bankStatementSchema,
  remittanceMatchSchema,
  setAsideCategorySchema,
  statementEntrySchema,
  toBankCreditResource,
  toBankStatementResource,
} from '../../../settlement/cash/cash-resource.ts';
import {
  listBankStatementEntries,
  listBankStatements,
  listCreditsToMatch,
  listRemittanceResources,
  listReversalsToPlace,
  matchingPolicyOf,
  showBankCredit,
  showBankStatement,
  showRemittance,
} from '../../../settlement/cash/cash-service.ts';
import { restoreCredit, setCreditAside } from '../../../settlement/cash/credit-decision-service.ts';
import { resolveReversal } from '../../../settlement/cash/reversal-service.ts';
import { matchCreditManually, unmatch } from '../../../settlement/cash/matching-service.ts';
import { remittanceSchema, remittanceStatusSchema } from '../../../settlement/cash/remittance-service.ts';
import { readStatement, recordStatement } from '../../../settlement/cash/statement-import-service.ts';
import { toRemittanceMatchResource } from '../../../settlement/cash/cash-resource.ts';
import { isoDateSchema } from '../../../platform/shared/schemas.ts';
import type { RouteModule } from '../app.ts';
import { HttpProblem, problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { withinLimit } from '../streamed-body.ts';

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const cash = (scope: 'cash:read' | 'cash:write') => ({ kind: 'both', scope, roles: ['operator'] }) as const;

const STATEMENT_MEDIA_TYPES = new Set(['application/xml', 'text/xml', 'text/csv']);
const mediaTypeOf = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase();

const limitQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(1_000).default(100) });
const statementParams = z.strictObject({ statement_id: z.string() });
const creditParams = z.strictObject({ credit_id: z.string() });
const matchParams = z.strictObject({ match_id: z.string() });
const remittanceParams = z.strictObject({ payroll_id: z.string(), pay_date: isoDateSchema });
const importQuery = z.strictObject({ file_name: z.string().trim().min(1).max(200).optional().meta({ description: 'The file name, kept with the statement' }) });
const remittancesQuery = z.strictObject({
  pay_date: isoDateSchema.optional(),
  status: remittanceStatusSchema.optional(),
  payroll_id: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(100),
});

const matchingSchema = z.object({
  matches: z.number().int(),
  unmatched_credits: z.number().int().meta({ description: 'Credits with money still unmatched: the exceptions queue' }),
  by_rule: z.record(z.string(), z.number().int()),
});
const entryOutcomeSchema = statementEntrySchema.pick({
  entry_index: true,
  bank_reference: true,
  direction: true,
  amount: true,
  outcome: true,
  bank_credit_id: true,
  detail: true,
});
const importedStatementSchema = z.object({
  statement: bankStatementSchema,
  replayed: z.boolean().meta({ description: 'This statement (and page) was imported before, from this file or another: nothing changed' }),
  new_credits: z.number().int(),
  entries: z.array(entryOutcomeSchema).meta({ description: 'What the import made of each entry (none when replayed)' }),
});
const reversalsSchema = z.object({
  applied: z.number().int().meta({ description: 'Reversals that took back the credit they name' }),
  unresolved: z.number().int().meta({ description: 'Reversals waiting for a person (GET /bank-reversals)' }),
  shortfall: z.number().int().meta({ description: 'Minor units newly owed back: paid out of pay dates whose credit the bank took back' }),
});
const importResultSchema = z
  .object({
    statement: bankStatementSchema.meta({ description: "The file's first statement" }),
    statements: z.array(importedStatementSchema).meta({ description: 'Every statement (and page) of the file, in file order' }),
    replayed: z.boolean().meta({ description: 'Every statement of the file was imported before; nothing changed' }),
    new_credits: z.number().int(),
    matching: matchingSchema.nullable(),
    reversals: reversalsSchema,
  })
  .meta({
    id: 'BankStatementImport',
    description: 'A statement imported and matched, or recognised as imported before.',
    example: {
      statement: bankStatementSchema.meta()!.example,
      statements: [
        {
          statement: bankStatementSchema.meta()!.example,
          replayed: false,
          new_credits: 40,
          entries: [
            {
              entry_index: 0,
              bank_reference: 'BANK-REF-000123',
              direction: 'credit',
              amount: 1_498_000,
              outcome: 'new',
              bank_credit_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a04',
              detail: null,
            },
          ],
        },
      ],
      replayed: false,
      new_credits: 40,
      matching: { matches: 40, unmatched_credits: 2, by_rule: { exact: 37, normalised: 2, many_to_one: 1 } },
      reversals: { applied: 0, unresolved: 0, shortfall: 0 },
    },
  });
const statementsSchema = z
  .object({ bank_statements: z.array(bankStatementSchema) })
  .meta({ id: 'BankStatementList', description: 'Bank statements, newest first.', example: { bank_statements: [bankStatementSchema.meta()!.example] } });
const statementEnvelope = z
  .object({ bank_statement: bankStatementSchema })
  .meta({ id: 'BankStatementEnvelope', description: 'One bank statement.', example: { bank_statement: bankStatementSchema.meta()!.example } });
const creditsSchema = z
  .object({ bank_credits: z.array(bankCreditSchema) })
  .meta({ id: 'BankCreditList', description: 'Credits with money unmatched, oldest first.', example: { bank_credits: [bankCreditSchema.meta()!.example] } });
const creditEnvelope = z.object({ bank_credit: bankCreditSchema, matches: z.array(remittanceMatchSchema) }).meta({
  id: 'BankCreditEnvelope',
  description: 'One credit with every match made of it, live or taken back.',
  example: { bank_credit: bankCreditSchema.meta()!.example, matches: [remittanceMatchSchema.meta()!.example] },
});
const remittanceListItem = remittanceSchema.extend({ employer_name: z.string(), payroll_name: z.string() });
const remittancesSchema = z.object({ remittances: z.array(remittanceListItem) }).meta({
  id: 'RemittanceList',
  description: 'Remittances, newest pay date first.',
  example: { remittances: [{ ...(remittanceSchema.meta()!.example as Record<string, unknown>), employer_name: 'Northwind Traders Ltd', payroll_name: 'Monthly' }] },
});
const remittanceEnvelope = z.object({ remittance: remittanceSchema, matches: z.array(remittanceMatchSchema) }).meta({
  id: 'RemittanceEnvelope',
  description: 'One remittance with every match made to it.',
  example: { remittance: remittanceSchema.meta()!.example, matches: [remittanceMatchSchema.meta()!.example] },
});

const manualMatchBody = z
  .strictObject({
    allocations: z
      .array(z.strictObject({ payroll_id: z.uuid(), pay_date: isoDateSchema, amount: z.number().int().positive().meta({ description: 'Minor units' }) }))
      .min(1)
      .max(100),
    reason: z.string().trim().min(1).max(500).optional(),
  })
  .meta({
    id: 'ManualMatchRequest',
    description: 'Which payroll pay dates a credit pays, and how much of it each: several allocations split the credit.',
    example: { allocations: [{ payroll_id: '019a7b2c-0000-7000-8000-000000000001', pay_date: '2026-11-27', amount: 1_498_000 }], reason: 'Employer confirmed by email' },
  });
const matchesEnvelope = z
  .object({ matches: z.array(remittanceMatchSchema) })
  .meta({ id: 'RemittanceMatchList', description: 'The matches made.', example: { matches: [remittanceMatchSchema.meta()!.example] } });
const unmatchBody = z
  .strictObject({ reason: z.string().trim().min(1).max(500) })
  .meta({ id: 'UnmatchRequest', description: 'Why the match is taken back.', example: { reason: 'Credit belongs to another employer' } });
const unmatchResult = z.object({ match: remittanceMatchSchema, received: z.number().int(), entries_unfunded: z.number().int() }).meta({
  id: 'UnmatchResult',
  description: 'The match taken back, what the remittance has received without it, and how many unpaid entries lost their funding.',
  example: { match: remittanceMatchSchema.meta()!.example, received: 0, entries_unfunded: 3 },
});

const entriesSchema = z
  .object({ entries: z.array(statementEntrySchema) })
  .meta({ id: 'BankStatementEntryList', description: 'Statement entries and what the import made of them.', example: { entries: [statementEntrySchema.meta()!.example] } });
const creditOnlyEnvelope = z
  .object({ bank_credit: bankCreditSchema })
  .meta({ id: 'BankCreditOnly', description: 'One credit.', example: { bank_credit: bankCreditSchema.meta()!.example } });
const setAsideBody = z.strictObject({ category: setAsideCategorySchema, reason: z.string().trim().min(1).max(500) }).meta({
  id: 'SetAsideRequest',
  description: 'Why the credit is no remittance.',
  example: { category: 'bank_interest', reason: 'Quarterly interest on the collection account' },
});
const reversalParams = z.strictObject({ entry_id: z.string() });
const placeReversalBody = z.strictObject({ bank_credit_id: z.uuid(), reason: z.string().trim().min(1).max(500) }).meta({
  id: 'PlaceReversalRequest',
  description: 'The credit the bank took back.',
  example: { bank_credit_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a04', reason: 'Bank confirmed the recall of this payment' },
});
const placedReversalSchema = z
  .object({ entry_id: z.uuid(), bank_credit_id: z.uuid(), shortfall: z.number().int().meta({ description: 'Minor units newly owed back' }) })
  .meta({
    id: 'PlacedReversal',
    description: 'A reversal placed on the credit it took back.',
    example: { entry_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a05', bank_credit_id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a04', shortfall: 0 },
  });

/** Operators' cash: bank statements in, the exceptions queue, manual matching, remittances. */
export const registerCashRoutes: RouteModule = (app, deps) => {
  const policy = () => matchingPolicyOf(deps.db, deps.config);

  // The file is streamed to the parser, never held whole: only this route reads XML and CSV.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    for (const type of STATEMENT_MEDIA_TYPES) scope.addContentTypeParser(type, (_request, payload, done) => done(null, payload));
    defineRoute(scope, {
      method: 'POST',
      url: '/bank-statements',
      operationId: 'import_bank_statement',
      summary: 'Import a bank statement',
      description:
        'Operators: import a statement of one of our collection accounts, as ISO 20022 camt.053 (end of day) or camt.054 ' +
        '(intraday credit notification) XML, or as the CSV layout docs/finance.md documents (The CSV layout) (`text/csv`). The file is streamed ' +
        'and checked whole before anything is stored: a malformed file, an account that is not ours, another currency than ' +
        "the account's, a duplicate entry, a zero or negative amount, a DTD or entity declaration is refused with the reason " +
        'and position, and nothing is imported. An entry that cannot be used (a zero amount, another currency...) is kept with ' +
        'its reason (`unusable`) and the rest of the file is imported. Each credit is told apart from the credits the account ' +
        'already has by its booking date, amount and bank references (a camt.054 notice and the camt.053 that books it, or a ' +
        'batch and its lump sum, are one credit; a shared reference with another amount is `conflicting`, held for a person). ' +
        'New credits are then matched to remittances by the rules (exact reference and amount; normalised reference; one credit ' +
        'for several pay dates; several credits for one; within the tolerance, flagged), never to a remittance a person unmatched ' +
        'them from; the rest wait in the exceptions queue. A reversal or return takes back the credit it names: its matches are ' +
        "undone, and what was already paid out becomes the pay date's `shortfall`. Each statement (and page) of a file is " +
        'recorded once: the same statement again changes nothing (200, `replayed`); another with the same id and page is a 409. ' +
        'The result says, per entry, what the import made of it.',
      tags: ['Cash'],
      auth: cash('cash:write'),
      bodyLimit: deps.config.STATEMENT_LIMIT_BYTES,
      streamedBody: {
        contentType: 'application/xml',
        description: 'camt.053 or camt.054 XML (application/xml); or the CSV layout (text/csv)',
        example: '<?xml version="1.0" encoding="UTF-8"?>\n<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt>…</BkToCstmrStmt></Document>',
      },
      query: importQuery,
      idempotencyKey: 'optional',
      responses: {
        200: { description: 'The same file was imported before: nothing changed', schema: importResultSchema },
        201: { description: 'Imported, and matched as far as the rules go', schema: importResultSchema },
        409: { description: 'Another file with this statement id was imported', ...problem },
        413: { description: 'The file is larger than STATEMENT_LIMIT_BYTES', ...problem },
        415: { description: 'Neither XML nor CSV', ...problem },
        422: { description: 'The statement is refused whole, with the reason and position (line, column)', ...problem },
      },
      effect: async (ctx, trx) => {
        if (!STATEMENT_MEDIA_TYPES.has(mediaTypeOf(ctx.request.headers['content-type']) ?? '') || !(ctx.request.body instanceof Readable)) {
          throw new HttpProblem(415, 'unsupported-media-type', 'Send the statement as application/xml (camt.053, camt.054) or text/csv');
        }
        const limit = deps.config.STATEMENT_LIMIT_BYTES;
        if (Number(ctx.request.headers['content-length'] ?? 0) > limit) throw new HttpProblem(413, 'body-too-large', `A bank statement may be at most ${limit} bytes`);
        const read = await readStatement(Readable.from(withinLimit(ctx.request.body, limit, 'A bank statement')), { maxBytes: limit, fileName: ctx.query.file_name ?? null });
        const outcome = await recordStatement(trx, { ...read, actor: clientActor(ctx.caller.clientId), policy: await policy() });
        return {
          status: outcome.replayed ? 200 : 201,
          body: {
            statement: toBankStatementResource(outcome.statement),
            statements: outcome.statements.map((recorded) => ({
              statement: toBankStatementResource(recorded.statement),
              replayed: recorded.replayed,
              new_credits: recorded.newCredits,
              entries: recorded.entries.map((entry) => ({
                entry_index: entry.index,
                bank_reference: entry.bankReference,
                direction: entry.direction,
                amount: entry.amount,
                outcome: entry.outcome,
                bank_credit_id: entry.creditId,
                detail: entry.detail,
              })),
            })),
            replayed: outcome.replayed,
            new_credits: outcome.newCredits,
            matching: outcome.matching && { matches: outcome.matching.matches, unmatched_credits: outcome.matching.unmatchedCredits, by_rule: outcome.matching.byRule },
            reversals: { applied: outcome.reversals.applied, unresolved: outcome.reversals.unresolved, shortfall: outcome.reversals.shortfall },
          },
        };
      },
    });
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bank-statements',
    operationId: 'list_bank_statements',
    summary: 'List bank statements',
    description: 'Operators: the statements imported, newest first.',
    tags: ['Cash'],
    auth: cash('cash:read'),
    query: limitQuery,
    responses: { 200: { description: 'Statements', schema: statementsSchema } },
    handler: async (ctx) => ({ status: 200, body: { bank_statements: await listBankStatements(deps.db, ctx.query.limit) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bank-statements/:statement_id',
    operationId: 'get_bank_statement',
    summary: 'Get a bank statement',
    description: 'Operators: one imported statement and its figures.',
    tags: ['Cash'],
    auth: cash('cash:read'),
    params: statementParams,
    responses: { 200: { description: 'The statement', schema: statementEnvelope }, 404: { description: 'No such statement', ...problem } },
    handler: async (ctx) => ({ status: 200, body: { bank_statement: await showBankStatement(deps.db, ctx.params.statement_id) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bank-credits',
    operationId: 'list_unmatched_bank_credits',
    summary: 'List credits to match (the exceptions queue)',
    description: 'Operators: credits with money no rule could match to a remittance, oldest first: match them by hand.',
    tags: ['Cash'],
    auth: cash('cash:read'),
    query: limitQuery,
    responses: { 200: { description: 'Credits with unmatched money', schema: creditsSchema } },
    handler: async (ctx) => ({ status: 200, body: { bank_credits: await listCreditsToMatch(deps.db, ctx.query.limit) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bank-credits/:credit_id',
    operationId: 'get_bank_credit',
    summary: 'Get a credit and its matches',
    description: 'Operators: one credit with every match made of it, including those taken back.',
    tags: ['Cash'],
    auth: cash('cash:read'),
    params: creditParams,
    responses: { 200: { description: 'The credit', schema: creditEnvelope }, 404: { description: 'No such credit', ...problem } },
    handler: async (ctx) => {
      const { credit, matches } = await showBankCredit(deps.db, ctx.params.credit_id);
      return { status: 200, body: { bank_credit: credit, matches } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/bank-credits/:credit_id/matches',
    operationId: 'match_bank_credit',
    summary: 'Match a credit by hand',
    description:
      "Operators: say which payroll pay dates' remittances a credit pays, and how much of it each (several allocations split " +
      "the credit). The allocations may not exceed the credit's unmatched money; a remittance may be paid more than it expects " +
      '(it shows `over`). Audited with the reason.',
    tags: ['Cash'],
    auth: cash('cash:write'),
    params: creditParams,
    body: manualMatchBody,
    idempotencyKey: 'required',
    responses: {
      201: { description: 'The matches made', schema: matchesEnvelope },
      400: { description: 'Missing or invalid Idempotency-Key', ...problem },
      404: { description: 'No such credit, or no remittance for a payroll pay date', ...problem },
      409: { description: "The allocations exceed the credit's unmatched money", ...problem },
      422: { description: 'An allocation is invalid (currency, repeated pay date)', ...problem },
    },
    effect: async (ctx) => {
      const matches = await matchCreditManually(deps.db, clientActor(ctx.caller.clientId), await policy(), {
        creditId: ctx.params.credit_id,
        allocations: ctx.body.allocations.map((a) => ({ payrollId: a.payroll_id, payDate: a.pay_date, amount: a.amount })),
        reason: ctx.body.reason ?? null,
      });
      return { status: 201, body: { matches: matches.map(toRemittanceMatchResource) } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/remittance-matches/:match_id/unmatch',
    operationId: 'unmatch_remittance',
    summary: 'Take a match back',
    description:
      "Operators: the credit's money is unmatched again and the remittance loses it; entries funded by it and not yet paid out " +
      'lose their funding. Refused (409) when the remittance would then hold less than has been paid out of it. Audited with the reason.',
    tags: ['Cash'],
    auth: cash('cash:write'),
    params: matchParams,
    body: unmatchBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The match, taken back', schema: unmatchResult },
      404: { description: 'No such live match', ...problem },
      409: { description: 'Money of this remittance has been paid out beyond what would remain', ...problem },
    },
    effect: async (ctx) => {
      const result = await unmatch(deps.db, clientActor(ctx.caller.clientId), await policy(), { matchId: ctx.params.match_id, reason: ctx.body.reason });
      return {
        status: 200,
        body: {
          match: toRemittanceMatchResource(result.match),
          received: result.received,
          entries_unfunded: result.entriesUnfunded,
        },
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bank-statements/:statement_id/entries',
    operationId: 'list_bank_statement_entries',
    summary: "List a statement's entries and what became of them",
    description: 'Operators: every entry of an imported statement, in file order, with its outcome (new, already known, superseded, conflicting, a reversal, unusable...).',
    tags: ['Cash'],
    auth: cash('cash:read'),
    params: statementParams,
    responses: { 200: { description: 'The entries', schema: entriesSchema }, 404: { description: 'No such statement', ...problem } },
    handler: async (ctx) => ({ status: 200, body: { entries: await listBankStatementEntries(deps.db, ctx.params.statement_id) } }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/bank-credits/:credit_id/set-aside',
    operationId: 'set_bank_credit_aside',
    summary: 'Set a credit aside',
    description:
      "Operators: the credit's unmatched money is no remittance (bank interest, money to return to its sender, a duplicate...): " +
      'it leaves the exceptions queue and no rule will ever match it. Its live matches stay. Audited with the reason; ' +
      '`POST /bank-credits/{credit_id}/restore` undoes it.',
    tags: ['Cash'],
    auth: cash('cash:write'),
    params: creditParams,
    body: setAsideBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The credit, set aside', schema: creditOnlyEnvelope },
      404: { description: 'No such credit', ...problem },
      409: { description: 'The credit is already set aside, or the bank reversed it', ...problem },
    },
    effect: async (ctx) => {
      const credit = await setCreditAside(deps.db, clientActor(ctx.caller.clientId), { creditId: ctx.params.credit_id, category: ctx.body.category, reason: ctx.body.reason });
      return { status: 200, body: { bank_credit: toBankCreditResource(credit) } };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/bank-credits/:credit_id/restore',
    operationId: 'restore_bank_credit',
    summary: 'Restore a credit set aside or held',
    description:
      'Operators: a credit set aside, or held for a person (a conflict, a returned payment), goes back to the exceptions queue and the rules. Audited with the reason.',
    tags: ['Cash'],
    auth: cash('cash:write'),
    params: creditParams,
    body: unmatchBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The credit, open again', schema: creditOnlyEnvelope },
      404: { description: 'No such credit', ...problem },
      409: { description: 'The credit is neither set aside nor held', ...problem },
    },
    effect: async (ctx) => {
      const credit = await restoreCredit(deps.db, clientActor(ctx.caller.clientId), { creditId: ctx.params.credit_id, reason: ctx.body.reason });
      return { status: 200, body: { bank_credit: toBankCreditResource(credit) } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bank-reversals',
    operationId: 'list_unresolved_bank_reversals',
    summary: 'List reversals to place',
    description: 'Operators: reversals and returns no rule could place (no single credit of their amount matched their references): say which credit the bank took back.',
    tags: ['Cash'],
    auth: cash('cash:read'),
    query: limitQuery,
    responses: { 200: { description: 'Reversals waiting for a person, oldest first', schema: entriesSchema } },
    handler: async (ctx) => ({ status: 200, body: { entries: await listReversalsToPlace(deps.db, ctx.query.limit) } }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/bank-reversals/:entry_id/place',
    operationId: 'place_bank_reversal',
    summary: 'Say which credit a reversal took back',
    description:
      'Operators: the credit (of the same amount and account) the bank reversed. Its matches are undone, its pay dates lose the money, ' +
      "entries it funded and not yet paid lose their funding, and what was already paid out becomes the pay date's shortfall " +
      '(status `shortfall`, `remittance.reversed` to its billers). Audited with the reason.',
    tags: ['Cash'],
    auth: cash('cash:write'),
    params: reversalParams,
    body: placeReversalBody,
    idempotencyKey: 'optional',
    responses: {
      200: { description: 'The reversal, placed', schema: placedReversalSchema },
      404: { description: 'No such unresolved reversal, or no such credit', ...problem },
      409: { description: 'The credit was already reversed', ...problem },
      422: { description: 'The credit is of another amount or account', ...problem },
    },
    effect: async (ctx) => {
      const placed = await resolveReversal(deps.db, clientActor(ctx.caller.clientId), await policy(), {
        entryId: ctx.params.entry_id,
        creditId: ctx.body.bank_credit_id,
        reason: ctx.body.reason,
      });
      return { status: 200, body: { entry_id: placed.entryId, bank_credit_id: placed.creditId, shortfall: placed.shortfall } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/remittances',
    operationId: 'list_remittances',
    summary: 'List remittances',
    description:
      "Operators: each payroll pay date's remittance from its lock on (expected, received, short, over, late or shortfall), what it expects and what has arrived, newest pay date first.",
    tags: ['Cash'],
    auth: cash('cash:read'),
    query: remittancesQuery,
    responses: { 200: { description: 'Remittances', schema: remittancesSchema } },
    handler: async (ctx) => ({
      status: 200,
      body: {
        remittances: await listRemittanceResources(deps.db, {
          limit: ctx.query.limit,
          ...(ctx.query.pay_date ? { payDate: ctx.query.pay_date } : {}),
          ...(ctx.query.status ? { status: ctx.query.status } : {}),
          ...(ctx.query.payroll_id ? { payrollId: ctx.query.payroll_id } : {}),
        }),
      },
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/remittances/:payroll_id/:pay_date',
    operationId: 'get_remittance',
    summary: 'Get a remittance and its matches',
    description: "Operators: a payroll pay date's remittance, what it owes, and every match made to it.",
    tags: ['Cash'],
    auth: cash('cash:read'),
    params: remittanceParams,
    responses: { 200: { description: 'The remittance', schema: remittanceEnvelope }, 404: { description: 'No remittance for this payroll pay date', ...problem } },
    handler: async (ctx) => ({ status: 200, body: await showRemittance(deps.db, ctx.params.payroll_id, ctx.params.pay_date) }),
  });
};
