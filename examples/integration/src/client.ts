// A biller's client of the salary-deduction API: openapi-fetch over the types openapi-typescript
// generated from the service's /openapi.json (src/generated/openapi.d.ts). Every path, parameter, body
// and answer below is checked against those types, so a change of the API that breaks this client
// stops it compiling once the types are regenerated.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.d.ts';

export type Schemas = components['schemas'];
/** RFC 9457 problem details: how the API refuses a request (`type`, `title`, `status`, `errors`...). */
export type ProblemDetails = Schemas['ProblemDetails'];
/** RFC 6749 error: how the token endpoint alone refuses a request. */
export type OAuthError = Schemas['OAuthError'];
export type ApiClient = Client<paths>;

/** What a biller is issued: a client id and secret, and an API key, shown once. */
export interface BillerCredentials {
  clientId: string;
  clientSecret: string;
  apiKey: string;
}

/** A refusal, with what the service said about it. */
export class ApiError extends Error {
  readonly operation: string;
  readonly status: number;
  readonly problem: ProblemDetails | OAuthError;

  constructor(operation: string, status: number, problem: ProblemDetails | OAuthError) {
    super(`${operation} failed: ${status} ${describeRefusal(problem)}`);
    this.name = 'ApiError';
    this.operation = operation;
    this.status = status;
    this.problem = problem;
  }

  /** The problem's code: the last segment of its `type` (`consumer-not-employee`), or the OAuth `error`. */
  get code(): string {
    return 'type' in this.problem ? this.problem.type.slice(this.problem.type.lastIndexOf('/') + 1) : this.problem.error;
  }
}

function describeRefusal(problem: ProblemDetails | OAuthError): string {
  if (!('type' in problem)) return `${problem.error}: ${problem.error_description}`;
  const fields = (problem.errors ?? []).map((error) => `${error.pointer} ${error.detail}`);
  return [problem.title, problem.detail, ...fields].filter((part) => part !== undefined).join('; ');
}

/** OAuth 2.0 client credentials: a bearer token for the client's scopes. */
export async function requestAccessToken(baseUrl: string, credentials: BillerCredentials): Promise<Schemas['TokenResponse']> {
  const anonymous = createClient<paths>({ baseUrl });
  // openapi-fetch answers `data` (typed by the operation's success response) or `error` (by its
  // refusals: here the RFC 6749 error, or a ProblemDetails), never both.
  const { data, error, response } = await anonymous.POST('/oauth2/token', {
    body: { grant_type: 'client_credentials', client_id: credentials.clientId, client_secret: credentials.clientSecret },
    // The token endpoint takes a form (RFC 6749); openapi-fetch encodes the body as one for this media type.
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  if (error) throw new ApiError('POST /oauth2/token', response.status, error);
  return data;
}

/** Refresh a token this long before it expires, so no request carries one that runs out on the way. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * The API client every call of the integration goes through: each request carries a bearer token
 * (fetched when first needed, and again shortly before it expires) and the API key, both of the same
 * client, as the API requires.
 */
export function billerClient(baseUrl: string, credentials: BillerCredentials, now: () => number = Date.now): ApiClient {
  let token: { value: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;
  const accessToken = async (): Promise<string> => {
    if (token !== undefined && now() < token.expiresAt - REFRESH_MARGIN_MS) return token.value;
    pending ??= requestAccessToken(baseUrl, credentials)
      .then((issued) => {
        token = { value: issued.access_token, expiresAt: now() + issued.expires_in * 1000 };
        return issued.access_token;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };

  const client = createClient<paths>({ baseUrl, headers: { 'x-api-key': credentials.apiKey } });
  client.use({
    async onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${await accessToken()}`);
      return request;
    },
  });
  return client;
}
