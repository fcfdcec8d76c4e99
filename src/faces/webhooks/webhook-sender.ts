import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { ResolvedAddress, WebhookTarget } from './webhook-target.ts';

/** What an attempt keeps of the receiver's answer: enough to debug, never a whole page. */
export const RESPONSE_SNIPPET_BYTES = 1024;
const USER_AGENT = 'salary-deductions-webhooks/1';

export interface WebhookPost {
  target: WebhookTarget;
  headers: Record<string, string>;
  body: string;
  /** For the whole exchange: connect, send, and the answer's status line. */
  timeoutMs: number;
}

export interface WebhookPostResult {
  /** Null when no answer came (refused connection, timeout, TLS failure). */
  statusCode: number | null;
  retryAfter: string | undefined;
  responseSnippet: string | null;
  error: string | null;
  latencyMs: number;
}

/** Hands the already-checked address to the socket, whatever DNS would say now. */
function pinnedLookup(address: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
}

/** UTF-8 text of at most `limit` bytes, without a split character or NUL (which text columns refuse). */
function snippetOf(chunks: readonly Buffer[], limit: number): string {
  const text = new StringDecoder('utf8').write(Buffer.concat(chunks).subarray(0, limit));
  return text.replaceAll('\u0000', '');
}

/**
 * POSTs one delivery. Never throws: every outcome, including a timeout or a refused connection,
 * comes back as a result so the attempt can be recorded. Redirects are not followed (a 3xx is a
 * failure): following one would let a receiver send us to an address nobody checked.
 */
export function postWebhook(post: WebhookPost): Promise<WebhookPostResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const { url, address } = post.target;
    const client = url.protocol === 'https:' ? https : http;
    const chunks: Buffer[] = [];
    let received = 0;
    let statusCode: number | null = null;
    let retryAfter: string | undefined;
    let latencyMs: number | null = null;
    let settled = false;

    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve({
        statusCode,
        retryAfter,
        responseSnippet: statusCode === null ? null : snippetOf(chunks, RESPONSE_SNIPPET_BYTES),
        error: statusCode === null ? error : null,
        latencyMs: Math.round(latencyMs ?? performance.now() - started),
      });
    };

    const request = client.request(
      url,
      {
        method: 'POST',
        // A fresh connection per attempt: a pooled socket would outlive the address check it was made for.
        agent: false,
        headers: {
          ...post.headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(post.body)),
          'user-agent': USER_AGENT,
        },
        ...(address ? { lookup: pinnedLookup(address) } : {}),
      },
      (response) => {
        latencyMs = performance.now() - started;
        statusCode = response.statusCode ?? null;
        const header = response.headers['retry-after'];
        retryAfter = Array.isArray(header) ? header[0] : header;
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          received += chunk.length;
          if (received >= RESPONSE_SNIPPET_BYTES) finish(null);
        });
        response.on('end', () => finish(null));
        response.on('error', () => finish(null));
      },
    );
    request.on('error', (error) => finish(error.message));
    const timer = setTimeout(() => finish(`no answer within ${post.timeoutMs / 1000} s`), post.timeoutMs);
    request.end(post.body);
  });
}
