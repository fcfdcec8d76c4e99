import pino, { type LoggerOptions } from 'pino';
import type { Config } from '../config/config.ts';

/** Credentials never reach a log line, whichever header or field carries them. */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'client_secret',
  'clientSecret',
  'apiKey',
  'secret',
  '*.client_secret',
  '*.clientSecret',
  '*.apiKey',
  '*.access_token',
  '*.secret',
];

export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): LoggerOptions {
  return { level: config.LOG_LEVEL, redact: { paths: redactPaths, censor: '[redacted]' } };
}

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name?: string) {
  return pino({ ...loggerOptions(config), ...(name ? { name } : {}) });
}
