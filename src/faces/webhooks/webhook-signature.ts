import { createHmac, randomBytes } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks asks for 24 to 64 bytes of key; 32 matches the HMAC-SHA256 block of security. */
const SECRET_BYTES = 32;

/** How long a rotated-out secret keeps signing, so receivers can switch without dropping deliveries. */
export const SECRET_ROTATION_GRACE_MS = 24 * 3_600_000;

export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** Standard Webhooks v1: base64 HMAC-SHA256, keyed by the decoded secret, over `id.timestamp.body`. */
export function signWebhook(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const digest = createHmac('sha256', secretKey(secret)).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${digest}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The three Standard Webhooks headers. With more than one secret (during a rotation) every secret
 * signs and the signatures are space-separated; a receiver accepts the message if any one verifies.
 */
export function webhookHeaders(secrets: readonly string[], webhookId: string, sentAt: Date, body: string): WebhookHeaders {
  const timestamp = Math.floor(sentAt.getTime() / 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signWebhook(secret, webhookId, timestamp, body)).join(' '),
  };
}

/** The secrets that sign right now: the current one, plus the previous one while its grace lasts. */
export function signingSecrets(endpoint: { secret: string; previous_secret: string | null; previous_secret_expires_at: Date | string | null }, now: Date): string[] {
  const previousValid =
    endpoint.previous_secret !== null && endpoint.previous_secret_expires_at !== null && new Date(endpoint.previous_secret_expires_at).getTime() > now.getTime();
  return previousValid ? [endpoint.secret, endpoint.previous_secret!] : [endpoint.secret];
}
