import { isIP } from 'node:net';
import { nextCronFireAfter } from './cron.ts';
import { IANAZone } from 'luxon';
import { z } from 'zod';
import { MAX_EXACT_MINOR_UNITS } from '../money/major-units.ts';

/** When the nightly run starts unless NIGHTLY_CRON says otherwise: 01:00 (the job catalogue lists it with the other crons). */
export const NIGHTLY_CRON_DEFAULT = '0 1 * * *';
/** Two worker processes' worth of WEBHOOK_DELIVERIES_PER_BILLER (4). */
export const WEBHOOK_QUEUED_PER_BILLER_DEFAULT = 8;

const booleanString = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1');

/** A master key for stored secrets: base64 of exactly 32 random bytes (`openssl rand -base64 32`). */
const BASE64_KEY = /^[A-Za-z0-9+/]{43}=$/;
const secretsKey = z.string().trim().regex(BASE64_KEY, 'must be base64 of 32 random bytes (openssl rand -base64 32)');
const secretsKeyList = z
  .string()
  .transform((value) =>
    value
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean),
  )
  .pipe(z.array(secretsKey));

/** One seed of a Redis Cluster: where the client first asks for the cluster's map of slots. */
export interface RedisClusterNode {
  host: string;
  port: number;
}

/** `host:port,host:port`: a few of the cluster's nodes (any of them, masters or replicas); the client learns the rest. */
const redisClusterNodes = z
  .string()
  .trim()
  .min(1, 'is empty')
  .transform((value, ctx): RedisClusterNode[] => {
    const nodes: RedisClusterNode[] = [];
    for (const part of value.split(',').map((item) => item.trim())) {
      const match = /^(.+):(\d{1,5})$/.exec(part);
      const port = match ? Number(match[2]) : 0;
      if (!match || port < 1 || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `must be host:port seeds separated by commas ("${part}" is not host:port)` });
        return z.NEVER;
      }
      // [::1]:7000 names an IPv6 address; ioredis wants it without the brackets.
      nodes.push({ host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port });
    }
    return nodes;
  });

/**
 * The key prefix with a Redis Cluster hash tag: a key's slot is hashed from its first non-empty
 * `{...}` alone, so with `{deductions}` every key the service keeps (BullMQ's queues, whose Lua
 * scripts touch many keys at once, rate limits, heartbeats) lands in one slot, and no command,
 * script or transaction can span two slots. A prefix that already holds a tag is kept as it is.
 */
export function hashTaggedPrefix(prefix: string): string {
  const open = prefix.indexOf('{');
  const close = open === -1 ? -1 : prefix.indexOf('}', open + 1);
  return close > open + 1 ? prefix : `{${prefix}}`;
}

const timeZone = z.string().refine((zone) => IANAZone.isValidZone(zone), 'is not an IANA time zone');

/** A cron pattern the job scheduler can run: refused at start-up, not at the first run (see nextCronFireAfter). */
const cronPattern = z
  .string()
  .trim()
  .min(1, 'is empty')
  .superRefine((pattern, ctx) => {
    try {
      if (nextCronFireAfter(pattern, undefined, Date.now()) === undefined) ctx.addIssue({ code: 'custom', message: 'never fires' });
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not a cron pattern: ${(error as Error).message}` });
    }
  });

/** Fastify's trustProxy: 'true'/'false', a number of hops, or a comma-separated list of addresses or CIDRs. */
const trustProxy = z
  .string()
  .trim()
  .min(1, 'is empty')
  .transform((value): boolean | number | string[] => {
    if (value === 'true' || value === 'false') return value === 'true';
    if (/^\d+$/.test(value)) return Number(value);
    return value
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
  })
  .refine(
    (value) => !Array.isArray(value) || value.every(isTrustedProxyAddress),
    "is not 'true', 'false', a hop count, or a list of addresses, CIDRs, loopback, linklocal or uniquelocal",
  )
  .or(z.boolean());

function isTrustedProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (version === 4 ? 32 : 128));
}

/** GBP 1,000,000.00: far above any salary deduction, far below where totals stop being exact. */
export const DEFAULT_MAX_PAYMENT_AMOUNT_MINOR = 100_000_000;
export const DEFAULT_MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR = 100_000_000;

/**
 * What payroll may report it deducted: GBP 10,000,000.00 from one employee on one pay date, and
 * GBP 10,000,000,000.00 for a whole payroll pay date. Far above real pay, and far enough below 2^53
 * that every sum of reports the service computes stays exact (see reported-limits.ts).
 */
export const DEFAULT_MAX_REPORTED_DEDUCTION_MINOR = 1_000_000_000;
export const DEFAULT_MAX_REPORTED_PAY_DATE_TOTAL_MINOR = 1_000_000_000_000;
/** The largest values the two may be configured to: the safety argument in reported-limits.ts needs them. */
export const CEILING_REPORTED_DEDUCTION_MINOR = 10_000_000_000;
export const CEILING_REPORTED_PAY_DATE_TOTAL_MINOR = 10_000_000_000_000;

/** Two transactions at once: a payout run then uses both cores of a small database server. */
export const DEFAULT_PAYOUT_CONCURRENCY = 2;

/**
 * An amount limit in minor units. At most 15 digits, the largest amount a payment request may carry
 * at all (and a JSON number carries exactly), so limits never need more than a safe integer.
 */
const amountLimit = z.coerce.number().int().min(1).max(MAX_EXACT_MINOR_UNITS);

export const configSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/deductions'),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
    /**
     * A streaming replica for reads that may be a little behind: exports, reports and the console's
     * read-only pages. Unset or empty, they read the primary through DATABASE_URL's own pool (empty, so
     * that `DATABASE_READ_URL= deductions export ...` reads the primary once).
     */
    DATABASE_READ_URL: z.preprocess((value) => (value === '' ? undefined : value), z.url().optional()),
    /** Connections per process to DATABASE_READ_URL: an export holds one for as long as it streams. */
    DATABASE_READ_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(5),
    /**
     * How far behind the primary the replica may replay before those reads go to the primary instead
     * (checked once per report or page). 0: only a replica that has replayed all it has received.
     */
    DATABASE_READ_MAX_LAG_SECONDS: z.coerce.number().min(0).max(86_400).default(30),
    REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
    /**
     * Seeds of a Redis Cluster. When set, every Redis connection is a cluster connection; REDIS_URL
     * then only lends its username, password and scheme (rediss: for TLS) to every node, and
     * QUEUE_PREFIX gets a hash tag (hashTaggedPrefix).
     */
    REDIS_CLUSTER_NODES: redisClusterNodes.optional(),
    QUEUE_PREFIX: z.string().min(1).default('deductions'),
    HOST: z.string().default('127.0.0.1'),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    PUBLIC_BASE_URL: z.url().default('http://127.0.0.1:3000'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    SERVICE_TIME_ZONE: timeZone.default('Europe/London'),
    /** PEM (PKCS#8) private key that signs access tokens; generated and kept under var/ when absent. */
    AUTH_SIGNING_KEY_FILE: z.string().default('var/auth-signing-key.pem'),
    AUTH_ISSUER: z.string().min(1).default('urn:salary-deductions'),
    AUTH_AUDIENCE: z.string().min(1).default('urn:salary-deductions:api'),
    AUTH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(3600),
    /**
     * During a signing-key rotation: the key that signed until now. Tokens it signed keep verifying
     * and the JWKS lists it next to the current key, until it is unset again.
     */
    AUTH_PREVIOUS_SIGNING_KEY_FILE: z.string().min(1).optional(),
    /** When set, bearer tokens are verified against this external issuer's keys instead of ours. */
    AUTH_JWKS_URL: z.url().optional(),
    RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(1).default(100),
    RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
    /** Failed client authentications at the token endpoint per address, per TOKEN_FAILURE_WINDOW_SECONDS. */
    TOKEN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(20),
    /** Failed client authentications naming one client id, from any address, per window. */
    TOKEN_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(60),
    TOKEN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
    /**
     * Which proxies' X-Forwarded-For to believe for the caller's address (the token endpoint's limit
     * counts per address): false (the socket's peer), true (any), a hop count, or addresses/CIDRs.
     */
    TRUST_PROXY: trustProxy.default(false),
    BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024),
    IDEMPOTENCY_RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
    DEFAULT_PROVIDER_LEAD_DAYS: z.coerce.number().int().min(0).max(30).default(2),
    SETTLEMENT_DELAY_WORKING_DAYS: z.coerce.number().int().min(0).max(30).default(1),
    /**
     * What makes a collection payable: `received`, its employer's remittance matched on a bank statement
     * (the default), or `deducted`, payroll's report alone (trusted employers; employers.payout_funding
     * overrides this per employer).
     */
    PAYOUT_FUNDING: z.enum(['received', 'deducted']).default('received'),
    /**
     * Transactions one payout run keeps going at once: the chunks of a large payout (one biller's, over
     * 50,000 entries) and the payouts of different billers, side by side. Size it to PostgreSQL's cores,
     * below DATABASE_POOL_SIZE.
     */
    PAYOUT_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(DEFAULT_PAYOUT_CONCURRENCY),
    /** A remittance not fully received this many working days after the pay date is late. */
    REMITTANCE_LATE_WORKING_DAYS: z.coerce.number().int().min(0).max(60).default(3),
    /** A credit within this many minor units of a remittance's amount still matches it, flagged. */
    REMITTANCE_TOLERANCE_MINOR: z.coerce.number().int().min(0).max(100_000).default(100),
    /** The largest bank statement file accepted. */
    STATEMENT_LIMIT_BYTES: z.coerce.number().int().min(1_024).max(1_073_741_824).default(52_428_800),
    NIGHTLY_CRON: cronPattern.default(NIGHTLY_CRON_DEFAULT),
    /**
     * Pay-date jobs (lock, re-run, reconcile) one worker process runs at once. With several worker
     * processes the database sees their sum: size it to PostgreSQL's cores, not to each machine's.
     */
    PAY_DATE_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
    /** Availability checks per biller: a token bucket of its own, beside the general per-client limit. */
    AVAILABILITY_CHECKS_PER_MINUTE: z.coerce.number().int().min(1).default(60),
    AVAILABILITY_CHECKS_BURST: z.coerce.number().int().min(1).default(20),
    /**
     * Keys the HMAC under which the availability lookup log keeps national registration numbers. Required
     * in production; elsewhere a random key per process stands in (lookups then link only within it).
     */
    AVAILABILITY_LOG_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
    WEBHOOK_ALLOW_PRIVATE: booleanString.default(false),
    /**
     * Payroll providers' URLs may be http and reach loopback, private, link-local and other
     * special-purpose addresses: for tests and on-premise installs whose provider sits on the same
     * network. Off, they must be https to a public address, checked when set and at every connection.
     */
    PROVIDER_ALLOW_PRIVATE_URLS: booleanString.default(false),
    /** Webhook endpoints one biller may have (deleted ones do not count); one more is refused with 409. */
    WEBHOOK_ENDPOINTS_PER_BILLER: z.coerce.number().int().min(1).max(1_000).default(10),
    /** Deliveries of one biller a worker process sends at once, of its 16: a biller's slow receivers never take them all. */
    WEBHOOK_DELIVERIES_PER_BILLER: z.coerce.number().int().min(1).max(64).default(4),
    /**
     * Deliveries of one biller in the delivery queue at once (waiting, or being sent), across all worker
     * processes; the rest of its backlog waits in PostgreSQL, behind nobody else's deliveries.
     */
    WEBHOOK_QUEUED_PER_BILLER: z.coerce.number().int().min(1).max(1_000).default(WEBHOOK_QUEUED_PER_BILLER_DEFAULT),
    FILES_DIR: z.string().default('var/files'),
    /**
     * The master key that wraps the key of every stored secret (webhook signing secrets, payroll
     * providers' client secrets). Required in production; in development and test a key is generated
     * into SECRETS_KEY_FILE on first use.
     */
    SECRETS_KEY: secretsKey.optional(),
    /** Earlier master keys, comma-separated: still opened during a rotation, until `deductions secrets encrypt` re-wraps. */
    SECRETS_PREVIOUS_KEYS: secretsKeyList.default([]),
    SECRETS_KEY_FILE: z.string().default('var/secrets-key'),
    /** The most one payment request (or schedule instalment) may be, in minor units of its currency. */
    MAX_PAYMENT_AMOUNT_MINOR: amountLimit.default(DEFAULT_MAX_PAYMENT_AMOUNT_MINOR),
    /** The most one mandate may ask of payroll on one pay date, all its payment requests together. */
    MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: amountLimit.default(DEFAULT_MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR),
    /** The most payroll may report it deducted from one employee on one pay date (a push or a confirmation line), in minor units. */
    MAX_REPORTED_DEDUCTION_MINOR: z.coerce.number().int().min(1).max(CEILING_REPORTED_DEDUCTION_MINOR).default(DEFAULT_MAX_REPORTED_DEDUCTION_MINOR),
    /** The most payroll's reports for one payroll pay date may add up to (the current record of every employee), in minor units. */
    MAX_REPORTED_PAY_DATE_TOTAL_MINOR: z.coerce.number().int().min(1).max(CEILING_REPORTED_PAY_DATE_TOTAL_MINOR).default(DEFAULT_MAX_REPORTED_PAY_DATE_TOTAL_MINOR),
    /**
     * log2 of scrypt's N for new console password hashes and for the check of unknown accounts (N=2^17
     * is OWASP's recommendation; at least that in production). The cost travels in each hash, so
     * changing it leaves existing passwords verifiable. Tests use 2^14: the same code at an eighth of the time.
     */
    CONSOLE_PASSWORD_SCRYPT_LOG_N: z.coerce.number().int().min(14).max(20).default(17),
    /** When set, `/metrics` is also served on this port (HOST's address), alone; the API port's `/metrics` is unaffected. */
    METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
    /**
     * When set, `/metrics` (on the API port and METRICS_PORT) requires `Authorization: Bearer <token>`.
     * Unset, the API port answers 404 to `/metrics`, so nothing is exposed unless asked for.
     */
    METRICS_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
    /** A console session ends this long after its last request. */
    CONSOLE_SESSION_IDLE_MINUTES: z.coerce.number().int().min(1).max(1_440).default(30),
    /** ...and this long after sign-in, however busy. */
    CONSOLE_SESSION_MAX_HOURS: z.coerce.number().int().min(1).max(168).default(12),
    /** Failed console sign-ins one address (or one browser the account signed in on) may make against one account per window; never a lock on the account. */
    CONSOLE_LOCKOUT_FAILURES: z.coerce.number().int().min(1).max(100).default(5),
    /** The window those console sign-in failure limits refill over. */
    CONSOLE_LOCKOUT_MINUTES: z.coerce.number().int().min(1).max(1_440).default(15),
    /** Failed console sign-ins one address (IPv4, or IPv6 /48) may make per window, whatever emails it tries; a sign-in refused busy (503) counts as one. */
    CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).max(10_000).default(20),
    /** Failed console sign-ins against one account per window from browsers it never signed in on, from anywhere. */
    CONSOLE_SIGN_IN_FAILURES_PER_ACCOUNT: z.coerce.number().int().min(1).max(100_000).default(100),
    /** Console password hashes run at once (in libuv's threadpool, 4 threads by default, which other work shares); four times as many may wait, taken in turn (see PasswordChecks). */
    CONSOLE_PASSWORD_HASH_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  })
  .superRefine((config, ctx) => {
    if (config.NODE_ENV === 'production' && config.CONSOLE_PASSWORD_SCRYPT_LOG_N < 17) {
      ctx.addIssue({ code: 'custom', path: ['CONSOLE_PASSWORD_SCRYPT_LOG_N'], message: 'must be at least 17 in production (OWASP: scrypt N=2^17, r=8, p=1)' });
    }
    if (config.NODE_ENV === 'production' && config.SECRETS_KEY === undefined) {
      ctx.addIssue({ code: 'custom', path: ['SECRETS_KEY'], message: 'is required in production (base64 of 32 random bytes: openssl rand -base64 32)' });
    }
    // A single request at the per-request limit must fit its mandate's pay date, or the larger limit is a lie.
    if (config.MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR < config.MAX_PAYMENT_AMOUNT_MINOR) {
      ctx.addIssue({
        code: 'custom',
        path: ['MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR'],
        message: `must be at least MAX_PAYMENT_AMOUNT_MINOR (${config.MAX_PAYMENT_AMOUNT_MINOR})`,
      });
    }
    // Payroll must be able to report in full what one mandate may ask of one employee on one pay date.
    if (config.MAX_REPORTED_DEDUCTION_MINOR < config.MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR) {
      ctx.addIssue({
        code: 'custom',
        path: ['MAX_REPORTED_DEDUCTION_MINOR'],
        message: `must be at least MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR (${config.MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR})`,
      });
    }
    if (config.MAX_REPORTED_PAY_DATE_TOTAL_MINOR < config.MAX_REPORTED_DEDUCTION_MINOR) {
      ctx.addIssue({
        code: 'custom',
        path: ['MAX_REPORTED_PAY_DATE_TOTAL_MINOR'],
        message: `must be at least MAX_REPORTED_DEDUCTION_MINOR (${config.MAX_REPORTED_DEDUCTION_MINOR})`,
      });
    }
  })
  // On a cluster the prefix is hash-tagged here, once, so every key built from QUEUE_PREFIX anywhere
  // is cluster-safe; on one Redis it stays exactly as given, and existing keys keep their names.
  .transform((config) => (config.REDIS_CLUSTER_NODES ? { ...config, QUEUE_PREFIX: hashTaggedPrefix(config.QUEUE_PREFIX) } : config));

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Never echoed in a configuration error: the message may end up in a log. */
const SECRET_VARIABLES = new Set(['SECRETS_KEY', 'SECRETS_PREVIOUS_KEYS', 'AVAILABILITY_LOG_KEY']);
/** The password of a connection URL (`scheme://user:password@host`), however malformed the rest. */
const URL_PASSWORD = /(\/\/[^/:@\s]*:)[^@\s]*@/g;

/** What a configuration error may show of a value: secrets by length only, URLs without their password. */
function shownValue(variable: string, given: string): string {
  if (SECRET_VARIABLES.has(variable)) return `got ${given.length} characters`;
  return `got ${JSON.stringify(given.replace(URL_PASSWORD, '$1***@'))}`;
}

/** Parses the environment; the message names the first bad variable so an operator can fix it in one go. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const variable = String(issue.path[0] ?? 'environment');
  const given = env[variable];
  const shown = given === undefined ? 'missing' : shownValue(variable, given);
  throw new ConfigError(`Invalid configuration: ${variable} ${issue.message} (${shown})`);
}

let cached: Config | undefined;

export function loadConfig(): Config {
  cached ??= parseConfig();
  return cached;
}
