import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { ProviderAddress } from './provider-url-guard.ts';

export interface PinnedRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

/** Hands the already-checked address to the socket, whatever DNS would say now. */
function pinnedLookup(address: ProviderAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
}

/** Statuses whose response has no body (RFC 9110), which a Response cannot be given one for. */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * fetch() for one request to a provider, connected to `address` (the one providerTarget checked)
 * rather than to a fresh DNS answer: global fetch has no way to be told where to connect. TLS still
 * verifies the certificate against the URL's host name. Like fetch it answers the Response of any
 * status, never follows a redirect, rejects with TypeError('fetch failed', { cause }) when no answer
 * came, and with the signal's reason once aborted. A fresh connection per request: a pooled socket
 * would outlive the address check it was made for.
 */
export function fetchPinned(url: string, init: PinnedRequest, address: ProviderAddress): Promise<Response> {
  return new Promise((resolve, reject) => {
    if (init.signal.aborted) {
      reject(init.signal.reason);
      return;
    }
    const target = new URL(url);
    const client = target.protocol === 'https:' ? https : http;
    const request = client.request(target, { method: init.method, headers: init.headers, agent: false, lookup: pinnedLookup(address), signal: init.signal }, (response) => {
      const status = response.statusCode ?? 0;
      const headers = new Headers();
      try {
        for (let i = 0; i + 1 < response.rawHeaders.length; i += 2) headers.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
        const empty = NULL_BODY_STATUSES.has(status) || init.method === 'HEAD';
        if (empty) response.resume();
        const body = empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, statusText: response.statusMessage ?? '', headers }));
      } catch (error) {
        response.destroy();
        reject(new TypeError('fetch failed', { cause: error }));
      }
    });
    request.on('error', (error) => reject(init.signal.aborted ? init.signal.reason : new TypeError('fetch failed', { cause: error })));
    request.end(init.body);
  });
}
