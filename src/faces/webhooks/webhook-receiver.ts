import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver got, verified or not. */
export interface ReceivedDelivery {
  path: string;
  webhookId: string | undefined;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
  verified: boolean;
  /** The event type, from a verified body. */
  type: string | undefined;
  /** Why verification failed. */
  error: string | undefined;
  receivedAt: number;
  /** What the receiver answered (0: it cut the connection instead). */
  status: number;
}

export interface ReceiverAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Hold the answer back this long (a slow receiver). */
  delayMs?: number;
  /** Cut the connection without answering (a receiver, or a network, dying mid-request). */
  drop?: boolean;
}

export interface WebhookReceiverOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Endpoint secrets (whsec_...) to verify with; more can be added once endpoints are registered. */
  secrets?: readonly string[];
  /** Answers a verified delivery; 204 by default. Tests use it to play a failing receiver. */
  respond?: (delivery: ReceivedDelivery) => ReceiverAnswer | Promise<ReceiverAnswer>;
}

export interface ReceiverSummary {
  /** Distinct verified deliveries (by webhook-id) per event type. */
  byType: Record<string, number>;
  verified: number;
  /** Verified deliveries of a webhook-id already seen (at-least-once shows up here). */
  duplicates: number;
  rejected: number;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  /** Every request, in arrival order. */
  deliveries: ReceivedDelivery[];
  addSecret(secret: string): void;
  summary(): ReceiverSummary;
  /** Resolves once `condition` holds (checked every 20 ms); rejects after `timeoutMs`. */
  waitFor(condition: (receiver: WebhookReceiver) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A webhook receiver as a biller would write one: it verifies every delivery with the public
 * `standardwebhooks` package (any of its secrets may match, as during a rotation), answers 401 to
 * anything that does not verify, and counts what it got per event type.
 */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const verifiers = new Map<string, Webhook>();
  const addSecret = (secret: string) => {
    if (!verifiers.has(secret)) verifiers.set(secret, new Webhook(secret));
  };
  for (const secret of options.secrets ?? []) addSecret(secret);

  const deliveries: ReceivedDelivery[] = [];
  const seen = new Set<string>();
  const summary: ReceiverSummary = { byType: {}, verified: 0, duplicates: 0, rejected: 0 };

  const verify = (body: string, headers: IncomingHttpHeaders): { type: string | undefined; error: string | undefined } => {
    const signed = {
      'webhook-id': header(headers, 'webhook-id') ?? '',
      'webhook-timestamp': header(headers, 'webhook-timestamp') ?? '',
      'webhook-signature': header(headers, 'webhook-signature') ?? '',
    };
    let error = verifiers.size === 0 ? 'no secret to verify with' : undefined;
    for (const verifier of verifiers.values()) {
      try {
        const payload = verifier.verify(body, signed) as { type?: unknown };
        return { type: typeof payload?.type === 'string' ? payload.type : undefined, error: undefined };
      } catch (cause) {
        error = (cause as Error).message;
      }
    }
    return { type: undefined, error };
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const { type, error } = verify(body, request.headers);
      const delivery: ReceivedDelivery = {
        path: request.url ?? '/',
        webhookId: header(request.headers, 'webhook-id'),
        timestamp: header(request.headers, 'webhook-timestamp'),
        signature: header(request.headers, 'webhook-signature'),
        body,
        verified: error === undefined,
        type,
        error,
        receivedAt: Date.now(),
        status: 401,
      };
      deliveries.push(delivery);
      if (!delivery.verified) {
        summary.rejected += 1;
        response.writeHead(401, { 'content-type': 'text/plain' }).end(`signature rejected: ${error}`);
        return;
      }
      summary.verified += 1;
      if (seen.has(delivery.webhookId!)) summary.duplicates += 1;
      else {
        seen.add(delivery.webhookId!);
        const key = type ?? 'unknown';
        summary.byType[key] = (summary.byType[key] ?? 0) + 1;
      }
      try {
        const answer = options.respond ? await options.respond(delivery) : { status: 204 };
        if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
        if (answer.drop) {
          delivery.status = 0;
          request.socket.destroy();
          return;
        }
        delivery.status = answer.status;
        if (!response.destroyed) response.writeHead(answer.status, answer.headers).end(answer.body);
      } catch (cause) {
        delivery.status = 500;
        if (!response.destroyed) response.writeHead(500).end(String(cause));
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';

  const receiver: WebhookReceiver = {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    deliveries,
    addSecret,
    summary: () => ({ ...summary, byType: { ...summary.byType } }),
    async waitFor(condition, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!condition(receiver)) {
        if (Date.now() > deadline) throw new Error(`webhook receiver: condition not met within ${timeoutMs} ms (${deliveries.length} requests so far)`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
