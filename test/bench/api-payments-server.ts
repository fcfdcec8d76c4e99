/**
 * Server half of the POST /payments benchmark (test/bench/api-payments.ts forks it with
 * `node --import tsx`), so the load generator never shares the measured event loop.
 *
 * argv[2] is a JSON ServerOptions. Mode 'api' serves the real app (buildApp + routeModules);
 * mode 'baseline' serves one bare Fastify route that inserts an idempotency row and a payment
 * request in one transaction. With `breakdown`, the API server also times each stage of the
 * request path (hooks, JWT verify, Redis rate limit, every SQL statement, pool waits).
 *
 * IPC: sends {type:'listening', port}; answers {type:'window-start'} / {type:'window-end'} (the
 * latter with {type:'window', stats}); {type:'close'} closes everything and exits.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { parseConfig, type Config } from '../../src/platform/config/config.ts';
import { TokenIssuer } from '../../src/directory/auth/token-issuer.ts';
import { createPool, type Database } from '../../src/platform/db/connection.ts';
import type { DB } from '../../src/platform/db/tables.ts';
import { buildApp, type RouteModule } from '../../src/faces/http/app.ts';
import { composition } from '../../bin/composition.ts';
import { noProviderApis } from '../../src/directory/payroll-providers/adapter.ts';
import { connected, createProducerConnection } from '../../src/platform/runtime/redis-connections.ts';
import { queueReconciliationRequester } from '../../src/cycle/reconciliation/reconciliation-requests.ts';
import { loggerOptions } from '../../src/platform/shared/logger.ts';

export interface ServerOptions {
  mode: 'api' | 'baseline';
  databaseUrl: string;
  queuePrefix: string;
  poolSize: number;
  breakdown: boolean;
  /** When set, a CPU profile of the measurement window only is written here (.cpuprofile). */
  profileFile?: string | undefined;
  /** What the baseline's insert needs that the API would look up from the mandate. */
  baseline: { billerClientId: string; payrollId: string; employeeId: string; targetPayDate: string };
}

export type ServerMessage = { type: 'listening'; port: number } | { type: 'window'; stats: WindowStats };

export interface StageSummary {
  count: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

export interface WindowStats {
  /** CPU time of this process over the window, as a share of one core (1 = one core busy). */
  cpuCores: number;
  eventLoopDelayP50Ms: number;
  eventLoopDelayP99Ms: number;
  stages: Record<string, StageSummary>;
}

const options = JSON.parse(process.argv[2]!) as ServerOptions;

/** Samples per stage; the window's requests are a few tens of thousands, this bounds memory anyway. */
const MAX_SAMPLES = 500_000;

class StageTimer {
  private samples = new Map<string, number[]>();
  enabled = false;

  record(stage: string, ms: number): void {
    if (!this.enabled) return;
    let list = this.samples.get(stage);
    if (!list) this.samples.set(stage, (list = []));
    if (list.length < MAX_SAMPLES) list.push(ms);
  }

  async time<T>(stage: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.record(stage, performance.now() - started);
    }
  }

  reset(): void {
    this.samples.clear();
  }

  summary(): Record<string, StageSummary> {
    const result: Record<string, StageSummary> = {};
    for (const [stage, list] of this.samples) {
      const sorted = [...list].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
      result[stage] = {
        count: sorted.length,
        meanMs: sorted.reduce((sum, ms) => sum + ms, 0) / sorted.length,
        p50Ms: at(0.5),
        p99Ms: at(0.99),
      };
    }
    return result;
  }
}

const timer = new StageTimer();

/** Names a statement by its verb and table, so the breakdown reads as the request path does. */
function statementLabel(text: string): string {
  // A prepared statement names itself (`/* prepared: <name> */`, see src/platform/db/connection.ts).
  const prepared = /^\s*\/\* prepared: ([a-z_]+) \*\//.exec(text)?.[1];
  if (prepared) return `sql ${prepared}`;
  const normalized = text.trim().toLowerCase();
  if (normalized === 'begin' || normalized === 'commit' || normalized === 'rollback') return `sql ${normalized}`;
  const table =
    normalized.match(/^insert into "?([a-z_]+)"?/)?.[1] ??
    normalized.match(/^update "?([a-z_]+)"?/)?.[1] ??
    normalized.match(/^delete from "?([a-z_]+)"?/)?.[1] ??
    normalized.match(/\bfrom "?([a-z_]+)"?/)?.[1] ??
    'other';
  return `sql ${normalized.split(/\s+/)[0]} ${table}`;
}

/**
 * autocannon drops its sockets at the end of a run while requests are still in the server; wait
 * for their queries to finish before destroying the pool, or they fail noisily on a closed driver.
 */
async function drained(pool: pg.Pool): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((pool.waitingCount > 0 || pool.idleCount < pool.totalCount) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The project's pool, with every statement and every connection checkout timed when asked. */
function benchDatabase(url: string, poolSize: number): { db: Database; pool: pg.Pool } {
  const pool = createPool(url, poolSize);
  if (options.breakdown) {
    pool.on('connect', (client: pg.PoolClient) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const started = performance.now();
        const result = query(...args);
        const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string })?.text ?? '');
        if (result instanceof Promise) {
          result.then(
            () => timer.record(statementLabel(text), performance.now() - started),
            () => {},
          );
        }
        return result;
      };
    });
    const connect = pool.connect.bind(pool) as () => Promise<pg.PoolClient>;
    (pool as { connect: unknown }).connect = () => timer.time('pool checkout wait', connect);
  }
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), pool };
}

const requestStarts = new WeakMap<FastifyRequest, { received: number; parsed?: number; authenticated?: number; handled?: number }>();

/** Registered before the payment routes, so its preHandler runs right after authentication's. */
const stageHooks: RouteModule = (app) => {
  app.addHook('onRequest', async (request) => {
    requestStarts.set(request, { received: performance.now() });
  });
  app.addHook('preValidation', async (request) => {
    const marks = requestStarts.get(request);
    if (marks) marks.parsed = performance.now();
  });
  app.addHook('preHandler', async (request) => {
    const marks = requestStarts.get(request);
    if (marks) marks.authenticated = performance.now();
  });
  app.addHook('onSend', async (request) => {
    const marks = requestStarts.get(request);
    if (marks) marks.handled = performance.now();
  });
  app.addHook('onResponse', async (request) => {
    const marks = requestStarts.get(request);
    if (!marks?.parsed || !marks.authenticated || !marks.handled) return;
    timer.record('1 receive + parse body (onRequest -> preValidation)', marks.parsed - marks.received);
    timer.record('2 authenticate + rate limit (preHandler hook)', marks.authenticated - marks.parsed);
    timer.record('3 handler: zod + idempotency + effect (-> onSend)', marks.handled - marks.authenticated);
    timer.record('4 serialize + write (onSend -> onResponse)', performance.now() - marks.handled);
    timer.record('total in server', performance.now() - marks.received);
  });
};

function benchConfig(): Config {
  return parseConfig({
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    DATABASE_POOL_SIZE: String(options.poolSize),
    QUEUE_PREFIX: options.queuePrefix,
    LOG_LEVEL: 'warn',
    // High enough never to throttle: the benchmark measures the limiter's cost, not its refusals.
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_BURST: '1000000',
  });
}

async function startApi(config: Config): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const { db, pool } = benchDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  const redis = await connected(createProducerConnection(config.REDIS_URL));
  const tokens = await TokenIssuer.generate({
    issuer: config.AUTH_ISSUER,
    audience: config.AUTH_AUDIENCE,
    ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS,
  });
  const reconciliation = queueReconciliationRequester(config.REDIS_URL, config.QUEUE_PREFIX);
  const modules = options.breakdown ? [stageHooks, ...composition.routes] : composition.routes;
  const app = await buildApp({ config, db, redis, tokens, adapterFor: noProviderApis, reconciliation }, modules);
  if (options.breakdown) {
    const verify = tokens.verify.bind(tokens);
    tokens.verify = (token: string) => timer.time('2a JWT verify (ES256)', () => verify(token));
    const limiter = redis as unknown as { tokenBucket: (...args: unknown[]) => Promise<unknown> };
    const tokenBucket = limiter.tokenBucket.bind(redis);
    limiter.tokenBucket = (...args: unknown[]) => timer.time('2b rate limit (Redis EVALSHA)', () => tokenBucket(...args));
  }
  return {
    app,
    async close() {
      await app.close();
      await drained(pool);
      await reconciliation.close();
      const keys = await redis.keys(`${config.QUEUE_PREFIX}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
      await db.destroy();
    },
  };
}

/** The floor: what any POST /payments must do at least (one idempotency row, one insert, one commit). */
async function startBaseline(config: Config): Promise<{ app: FastifyInstance; close: () => Promise<void> }> {
  const { db, pool } = benchDatabase(config.DATABASE_URL, config.DATABASE_POOL_SIZE);
  const { billerClientId, payrollId, employeeId, targetPayDate } = options.baseline;
  const retentionMs = config.IDEMPOTENCY_RETENTION_DAYS * 86_400_000;
  const app = Fastify({ logger: loggerOptions(config), genReqId: () => crypto.randomUUID() });
  app.post('/baseline/payments', async (request, reply) => {
    const key = String(request.headers['idempotency-key']);
    const body = request.body as { payment_record: { mandate_id: string; amount: number; due_date?: string } };
    const record = body.payment_record;
    const payment = await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('idempotency_keys')
        .values({
          client_id: billerClientId,
          idempotency_key: key,
          fingerprint: createHash('sha256').update(JSON.stringify(body)).digest('hex'),
          expires_at: new Date(Date.now() + retentionMs),
        })
        .execute();
      return trx
        .insertInto('payment_requests')
        .values({
          biller_client_id: billerClientId,
          mandate_id: record.mandate_id,
          payroll_id: payrollId,
          employee_id: employeeId,
          currency: 'GBP',
          amount: record.amount,
          due_date: record.due_date ?? null,
          target_pay_date: targetPayDate,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    });
    return reply.code(201).send({ payment });
  });
  return {
    app,
    async close() {
      await app.close();
      await drained(pool);
      await db.destroy();
    },
  };
}

async function main(): Promise<void> {
  const config = benchConfig();
  const server = options.mode === 'api' ? await startApi(config) : await startBaseline(config);
  await server.app.listen({ host: '127.0.0.1', port: 0 });
  const address = server.app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  let windowCpu = process.cpuUsage();
  let windowStarted = performance.now();

  const profiler = options.profileFile ? new Session() : undefined;
  profiler?.connect();

  process.on('message', async (message: { type: string }) => {
    if (message.type === 'window-start') {
      if (profiler) {
        await profiler.post('Profiler.enable');
        await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
        await profiler.post('Profiler.start');
      }
      timer.reset();
      timer.enabled = true;
      loopDelay.reset();
      loopDelay.enable();
      windowCpu = process.cpuUsage();
      windowStarted = performance.now();
    } else if (message.type === 'window-end') {
      timer.enabled = false;
      loopDelay.disable();
      const cpu = process.cpuUsage(windowCpu);
      const elapsedMicros = (performance.now() - windowStarted) * 1000;
      if (profiler) {
        const { profile } = await profiler.post('Profiler.stop');
        writeFileSync(options.profileFile!, JSON.stringify(profile));
      }
      const stats: WindowStats = {
        cpuCores: (cpu.user + cpu.system) / elapsedMicros,
        eventLoopDelayP50Ms: loopDelay.percentile(50) / 1e6,
        eventLoopDelayP99Ms: loopDelay.percentile(99) / 1e6,
        stages: timer.summary(),
      };
      process.send!({ type: 'window', stats } satisfies ServerMessage);
    } else if (message.type === 'close') {
      profiler?.disconnect();
      await server.close();
      process.disconnect();
    }
  });
  process.send!({ type: 'listening', port } satisfies ServerMessage);
}

await main();
