import { getNextMillis } from 'bullmq';
import { IANAZone } from 'luxon';
import { z } from 'zod';
import { MAX_EXACT_MINOR_UNITS } from '../money/major-units.ts';

const booleanString = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

const timeZone = z.string().refine((zone) => IANAZone.isValidZone(zone), 'is not an IANA time zone');

/**
 * A cron pattern as BullMQ's job scheduler reads it (its own parser, through the function it computes
 * the next run with), so a pattern the scheduler would reject fails at start-up, not at the first run.
 */
const cronPattern = z
  .string()
  .trim()
  .min(1, 'is empty')
  .superRefine((pattern, ctx) => {
    try {
      if (getNextMillis(Date.now(), { pattern }) === undefined) ctx.addIssue({ code: 'custom', message: 'never fires' });
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `is not a cron pattern: ${(error as Error).message}` });
    }
  });

/** GBP 1,000,000.00: far above any salary deduction, far below where totals stop being exact. */
export const DEFAULT_MAX_PAYMENT_AMOUNT_MINOR = 100_000_000;
export const DEFAULT_MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR = 100_000_000;

/**
 * An amount limit in minor units. At most 15 digits, the largest amount a payment request may carry
 * at all (and a JSON number carries exactly), so limits never need more than a safe integer.
 */
const amountLimit = z.coerce.number().int().min(1).max(MAX_EXACT_MINOR_UNITS);

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/deductions'),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
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
  /** When set, bearer tokens are verified against this external issuer's keys instead of ours. */
  AUTH_JWKS_URL: z.url().optional(),
  RATE_LIMIT_PER_SECOND: z.coerce.number().int().min(1).default(100),
  RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
  IDEMPOTENCY_RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
  DEFAULT_PROVIDER_LEAD_DAYS: z.coerce.number().int().min(0).max(30).default(2),
  SETTLEMENT_DELAY_WORKING_DAYS: z.coerce.number().int().min(0).max(30).default(1),
  NIGHTLY_CRON: cronPattern.default('0 1 * * *'),
  WEBHOOK_ALLOW_PRIVATE: booleanString.default(false),
  FILES_DIR: z.string().default('var/files'),
  /** The most one payment request (or schedule instalment) may be, in minor units of its currency. */
  MAX_PAYMENT_AMOUNT_MINOR: amountLimit.default(DEFAULT_MAX_PAYMENT_AMOUNT_MINOR),
  /** The most one mandate may ask of payroll on one pay date, all its payment requests together. */
  MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR: amountLimit.default(DEFAULT_MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR),
}).superRefine((config, ctx) => {
  // A single request at the per-request limit must fit its mandate's pay date, or the larger limit is a lie.
  if (config.MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR < config.MAX_PAYMENT_AMOUNT_MINOR) {
    ctx.addIssue({
      code: 'custom',
      path: ['MAX_MANDATE_AMOUNT_PER_PAY_DATE_MINOR'],
      message: `must be at least MAX_PAYMENT_AMOUNT_MINOR (${config.MAX_PAYMENT_AMOUNT_MINOR})`,
    });
  }
});

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {}

/** Parses the environment; the message names the first bad variable so an operator can fix it in one go. */
export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const result = configSchema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const variable = String(issue.path[0] ?? 'environment');
  const given = env[variable];
  const shown = given === undefined ? 'missing' : `got ${JSON.stringify(given)}`;
  throw new ConfigError(`Invalid configuration: ${variable} ${issue.message} (${shown})`);
}

let cached: Config | undefined;

export function loadConfig(): Config {
  cached ??= parseConfig();
  return cached;
}
