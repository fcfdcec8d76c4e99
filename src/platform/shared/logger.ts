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
  'api_key',
  'apiKey',
  'access_token',
  'secret',
  '*.client_secret',
  '*.clientSecret',
  '*.api_key',
  '*.apiKey',
  '*.access_token',
  '*.secret',
  '*.authorization',
  '*["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
];

/** Query parameters that carry a credential when a client puts one in a URL (which it should not). */
const CREDENTIAL_PARAMETERS = new Set(['client_secret', 'api_key', 'apikey', 'x-api-key', 'access_token', 'token', 'secret', 'authorization', 'password']);

function parameterName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' ')).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/**
 * The URL with the value of every credential query parameter replaced by `[redacted]`; the rest is
 * kept byte for byte (a URL is evidence in an incident, so only what must go goes).
 */
export function redactUrlCredentials(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const fragment = url.indexOf('#', query);
  const end = fragment < 0 ? url.length : fragment;
  const parameters = url
    .slice(query + 1, end)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return CREDENTIAL_PARAMETERS.has(parameterName(name)) && equals >= 0 ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, query + 1)}${parameters.join('&')}${url.slice(end)}`;
}

/** Fastify's request serializer, with the query string's credentials redacted. */
function requestSerializer(request: { method?: string; url?: string; host?: string; ip?: string; socket?: { remotePort?: number } }) {
  return {
    method: request.method,
    url: request.url === undefined ? undefined : redactUrlCredentials(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export function loggerOptions(config: Pick<Config, 'LOG_LEVEL'>): LoggerOptions {
  return {
    level: config.LOG_LEVEL,
    redact: { paths: redactPaths, censor: '[redacted]' },
    serializers: { req: requestSerializer },
  };
}

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, name?: string) {
  return pino({ ...loggerOptions(config), ...(name ? { name } : {}) });
}
