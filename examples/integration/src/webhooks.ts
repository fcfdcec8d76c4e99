// Receiving the service's webhooks. Each delivery is signed as Standard Webhooks specifies
// (https://www.standardwebhooks.com): headers `webhook-id` (the event id, the same on every retry),
// `webhook-timestamp` and `webhook-signature`, an HMAC-SHA256 of `id.timestamp.body` keyed with the
// endpoint's `whsec_` secret. The `standardwebhooks` package checks all three, and the timestamp's
// age (five minutes either way), against the body exactly as it arrived.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Schemas } from './client.ts';

/** An event as the API documents it: one payload schema per event type, told apart by `type`. */
export type ServiceEvent = Schemas['Event'];
export type EventType = Schemas['EventType'];

/**
 * The event types this integration acts on. `satisfies` holds them to the API's EventType: one the
 * API renames or drops stops this compiling. A type added later is acknowledged and left alone.
 */
export const HANDLED_EVENT_TYPES = [
  'mandate.created',
  'mandate.updated',
  'payment_request.created',
  'payment_request.updated',
  'schedule.updated',
] as const satisfies readonly EventType[];
/** The events of those types: `event.type` narrows `event.data` to the mandate, the payment request or the schedule. */
export type HandledEvent = ServiceEvent & { type: (typeof HANDLED_EVENT_TYPES)[number] };

/** The three signature headers of a delivery, as they arrived. */
export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A delivery whose signature verified. */
export interface VerifiedDelivery {
  /** The event id, which is the `webhook-id` too: the same on every retry of the delivery. */
  id: string;
  type: string;
  /** The event, when it is of a type this integration handles. */
  event: HandledEvent | undefined;
}

export class UnverifiedDelivery extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnverifiedDelivery';
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A verified body of a handled type is read as the API documents that event, as openapi-fetch reads
 * every answer of the API by its documented type: the signature proves the service sent it, and the
 * envelope this receiver relies on is checked.
 */
function isHandledEvent(value: unknown): value is HandledEvent {
  return (
    isRecord(value) && typeof value.id === 'string' && typeof value.created_at === 'string' && isRecord(value.data) && HANDLED_EVENT_TYPES.some((type) => type === value.type)
  );
}

/**
 * Checks a delivery's signature with the endpoint's secret and reads its event; throws
 * UnverifiedDelivery when it does not verify (a wrong or missing signature, a timestamp more than five
 * minutes away, a body changed on the way) or is not an event.
 */
export function verifyDelivery(secret: string, body: string, headers: SignatureHeaders): VerifiedDelivery {
  try {
    // The exact bytes received: a body parsed and serialised again would not verify.
    new Webhook(secret).verify(body, { ...headers }, { jsonParse: false });
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw new UnverifiedDelivery(error.message);
    throw error;
  }
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    throw new UnverifiedDelivery('the body is not JSON');
  }
  if (!isRecord(payload) || typeof payload.id !== 'string' || typeof payload.type !== 'string') throw new UnverifiedDelivery('the body is not an event');
  // The webhook-id is the event id: deduplicating by one deduplicates by the other.
  if (payload.id !== headers['webhook-id']) throw new UnverifiedDelivery('the event id is not the webhook-id');
  return { id: payload.id, type: payload.type, event: isHandledEvent(payload) ? payload : undefined };
}

function signatureHeaders(headers: IncomingHttpHeaders): SignatureHeaders | undefined {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signature = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signature !== 'string') return undefined;
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
}

export interface WebhookReceiver {
  /** Where it listens, path included: the URL to register (or the one a tunnel forwards to). */
  readonly url: string;
  /** Verified events of the handled types, each once (a retried delivery has the same webhook-id), in arrival order. */
  readonly events: readonly HandledEvent[];
  /** Verified deliveries of other event types, acknowledged and left alone. */
  readonly ignored: number;
  /** Deliveries answered 401: no secret yet, or a signature that does not verify. */
  readonly refused: number;
  /** The endpoint's secret, once registering the endpoint has shown it (until then every delivery is refused, and retried). */
  useSecret(secret: string): void;
  /** Resolves once `condition` holds for the events received, or rejects after `timeoutMs`. */
  waitFor(condition: (events: readonly HandledEvent[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface WebhookReceiverOptions {
  host?: string;
  /** 0 (the default): any free port. */
  port?: number;
  path?: string;
  secret?: string;
  /** Called once per new handled event, with the delivery it came in (after the 204 is sent). */
  onEvent?: (event: HandledEvent, delivery: { body: string; headers: SignatureHeaders }) => void;
}

/**
 * A webhook endpoint on node:http. A delivery that verifies is answered 204 at once, and handled
 * after (the service waits at most 15 s for an answer, and retries a slow one); one that does not
 * verify is answered 401, and the service tries it again later.
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const path = options.path ?? '/webhooks';
  let secret = options.secret;
  const events: HandledEvent[] = [];
  const seen = new Set<string>();
  let ignored = 0;
  let refused = 0;

  const receive = (body: string, headers: SignatureHeaders | undefined): { status: number; message?: string } => {
    let delivery: VerifiedDelivery;
    try {
      if (secret === undefined) throw new UnverifiedDelivery('no secret yet');
      if (headers === undefined) throw new UnverifiedDelivery('the signature headers are missing');
      delivery = verifyDelivery(secret, body, headers);
    } catch (error) {
      if (!(error instanceof UnverifiedDelivery)) throw error;
      refused += 1;
      return { status: 401, message: error.message };
    }
    const { event } = delivery;
    if (event === undefined) ignored += 1;
    else if (!seen.has(event.id)) {
      seen.add(event.id);
      events.push(event);
      if (options.onEvent) setImmediate(options.onEvent, event, { body, headers });
    }
    return { status: 204 };
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || new URL(request.url ?? '/', 'http://receiver').pathname !== path) {
        response.writeHead(404).end();
        return;
      }
      const answer = receive(Buffer.concat(chunks).toString('utf8'), signatureHeaders(request.headers));
      if (answer.message === undefined) response.writeHead(answer.status).end();
      else response.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.message);
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`,
    events,
    get ignored() {
      return ignored;
    },
    get refused() {
      return refused;
    },
    useSecret(next) {
      secret = next;
    },
    async waitFor(condition, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!condition(events)) {
        if (Date.now() > deadline) throw new Error(`webhooks: not received within ${timeoutMs} ms (${events.length} events, ${refused} refused)`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
