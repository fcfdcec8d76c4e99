import { z } from 'zod';
import type { RouteModule } from '../app.ts';
import { problemDetailsSchema } from '../problem.ts';
import { defineRoute } from '../route.ts';
import { NotFoundError } from '../../../platform/shared/domain-errors.ts';
import { listRuns, runHistoryEntrySchema, runKindSchema, showRun } from '../../../cycle/runs/run-history-service.ts';

const problem = { schema: problemDetailsSchema, contentType: 'application/problem+json' };
const operatorsReading = { kind: 'both', scope: 'reports:read', roles: ['operator'] } as const;

const listRunsQuery = z.strictObject({
  kind: runKindSchema.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(50),
});

// Unknown kinds and ids name nothing: a 404, like any other unknown id in the path.
const runParams = z.strictObject({ kind: z.string(), run_id: z.string() });

const runsListSchema = z.object({ runs: z.array(runHistoryEntrySchema) }).meta({
  id: 'RunHistory',
  description: 'Runs newest first, across the kinds asked for.',
  example: {
    runs: [
      {
        kind: 'payout',
        id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8c',
        startedAt: '2026-11-30T06:00:00.512Z',
        finishedAt: null,
        outcome: 'unfinished',
        summary: 'run date 2026-11-30 (schedule), settled through 2026-11-27: unfinished',
      },
    ],
  },
});

const runDetailSchema = z.looseObject({ kind: runKindSchema, id: z.string() }).meta({
  id: 'RunDetail',
  description: "One run as its table records it, with what it worked on: a nightly run's `payDates`, a re-run's `requests`, a payout run's `payouts`.",
  example: {
    kind: 'reconciliation',
    id: '019a7b2c-5d3e-7f10-8a2b-3c4d5e6f7a8b',
    payroll_id: '019a7b2c-0000-7000-8000-000000000001',
    pay_date: '2026-11-27',
    trigger: 'sweep',
    started_at: '2026-11-30T05:00:02.118Z',
    finished_at: '2026-11-30T05:00:02.431Z',
    outcome: 'completed',
    collected: 1520000,
  },
});

export const registerRunRoutes: RouteModule = (app, deps) => {
  defineRoute(app, {
    method: 'GET',
    url: '/runs',
    operationId: 'list_runs',
    summary: 'List runs',
    description:
      'Operators: nightly runs, re-runs, reconciliation runs and payout runs, newest first. A run whose `finishedAt` is ' +
      'null is still working or was killed before it finished; its retry records a run of its own.',
    tags: ['Runs'],
    auth: operatorsReading,
    query: listRunsQuery,
    responses: { 200: { description: 'Runs, newest first', schema: runsListSchema } },
    handler: async ({ query }) => ({ status: 200, body: { runs: await listRuns(deps.db, { kind: query.kind, limit: query.limit }) } }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/runs/:kind/:run_id',
    operationId: 'get_run',
    summary: 'Get a run',
    description: "Operators: one run with what it worked on: a nightly run's pay dates, a re-run's requests, a payout run's payouts.",
    tags: ['Runs'],
    auth: operatorsReading,
    params: runParams,
    responses: {
      200: { description: 'The run', schema: runDetailSchema },
      404: { description: 'No run of that kind with that id', ...problem },
    },
    handler: async ({ params }) => {
      const kind = runKindSchema.safeParse(params.kind);
      if (!kind.success) throw new NotFoundError(`Run ${params.kind} ${params.run_id}`);
      return { status: 200, body: JSON.parse(JSON.stringify(await showRun(deps.db, kind.data, params.run_id))) as z.infer<typeof runDetailSchema> };
    },
  });
};
