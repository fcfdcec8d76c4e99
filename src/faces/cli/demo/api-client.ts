import { randomUUID } from 'node:crypto';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what} answered ${status}: ${JSON.stringify(body)}`);
  }
}

/**
 * A small HTTP client of our own API, used by the demo the way an integrator would use it: a
 * client-credentials token plus the API key on every call, and an Idempotency-Key on every POST.
 */
export class ApiClient {
  private token: { value: string; expiresAt: number } | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly credentials: ClientCredentials,
  ) {}

  private async accessToken(): Promise<string> {
    if (this.token && this.token.expiresAt > Date.now() + 30_000) return this.token.value;
    const response = await fetch(`${this.baseUrl}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: this.credentials.clientId,
        client_secret: this.credentials.clientSecret,
      }),
    });
    const body = (await response.json()) as { access_token: string; expires_in: number };
    if (!response.ok) throw new ApiError(response.status, body, 'POST /oauth2/token');
    this.token = { value: body.access_token, expiresAt: Date.now() + body.expires_in * 1000 };
    return this.token.value;
  }

  async call<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${await this.accessToken()}`,
      'x-api-key': this.credentials.apiKey,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method === 'POST') headers['idempotency-key'] = randomUUID();
    const response = await fetch(`${this.baseUrl}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    const parsed = text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text;
    return { status: response.status, body: parsed as T };
  }

  /** Like call, but any non-2xx is an error. */
  async expect<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    const response = await this.call<T>(method, path, body);
    if (response.status >= 300) throw new ApiError(response.status, response.body, `${method} ${path}`);
    return response.body;
  }
}

/** Runs `work` over `items` with at most `parallel` in flight. */
export async function inParallel<T, R>(items: readonly T[], parallel: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  async function lane() {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallel, items.length) }, lane));
  return results;
}
