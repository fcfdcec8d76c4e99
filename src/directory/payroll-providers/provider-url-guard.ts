import type { FieldError } from '../../platform/shared/domain-errors.ts';

// Payroll providers' URLs are set by operators, but we send our client secret to them and employees'
// data through them: http would put both on the wire in clear, and an address inside our own network
// (loopback, a cloud metadata service on link-local, a private range) would make the service an
// instrument against it. The rule is the webhook target guard's (src/faces/webhooks/webhook-target.ts:
// https only, public addresses only, checked on the URL and on every DNS answer, and the connection
// pinned to the address checked), so that both follow one list of special-purpose ranges. The
// webhooks area depends on this one, so the edges hand the guard in (providerUrlPolicy) rather than
// this area importing it.

export interface ProviderAddress {
  address: string;
  family: 4 | 6;
}

export type ProviderHostResolver = (hostname: string) => Promise<ProviderAddress[]>;

/** Where a call may connect: with `address` set, to exactly that address, whatever DNS says later. */
export interface CheckedTarget {
  url: URL;
  address: ProviderAddress | null;
}

/** The webhook target guard (resolveWebhookTarget): rejects a URL it refuses, with the reason as message. */
export type TargetGuard = (url: string, policy: { allowPrivate: boolean; resolveHost: ProviderHostResolver }) => Promise<CheckedTarget>;

export interface ProviderUrlPolicy {
  /** PROVIDER_ALLOW_PRIVATE_URLS: http and non-public addresses allowed (tests, on-premise installs). */
  allowPrivate: boolean;
  /** Checks a URL and says where a call to it may connect; rejects with ProviderUrlRefused. */
  target(url: string): Promise<CheckedTarget>;
}

export class ProviderUrlRefused extends Error {
  override readonly name = 'ProviderUrlRefused';
}

/**
 * The policy of an installation: `allowPrivate` is its PROVIDER_ALLOW_PRIVATE_URLS, `guard` and
 * `resolveHost` the webhook target guard and the system resolver (webhook-target.ts).
 */
export function providerUrlPolicy(allowPrivate: boolean, guard: TargetGuard, resolveHost: ProviderHostResolver): ProviderUrlPolicy {
  return {
    allowPrivate,
    async target(url) {
      try {
        return await guard(url, { allowPrivate, resolveHost });
      } catch (error) {
        throw new ProviderUrlRefused(error instanceof Error ? error.message : String(error), { cause: error });
      }
    },
  };
}

/**
 * The policy of an adapter built without one. With PROVIDER_ALLOW_PRIVATE_URLS on in the environment
 * (tests, on-premise installs), any http(s) URL, connected as it is; otherwise every URL is refused,
 * since nothing here can check it: an adapter given no guard fails closed rather than going unguarded.
 */
export function unguardedProviderUrlPolicy(env: NodeJS.ProcessEnv = process.env): ProviderUrlPolicy {
  const allowPrivate = env.PROVIDER_ALLOW_PRIVATE_URLS === 'true' || env.PROVIDER_ALLOW_PRIVATE_URLS === '1';
  return {
    allowPrivate,
    async target(url) {
      if (!allowPrivate) throw new ProviderUrlRefused('This adapter was given no URL policy, and PROVIDER_ALLOW_PRIVATE_URLS is off');
      const parsed = URL.canParse(url) ? new URL(url) : undefined;
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new ProviderUrlRefused('The URL must be an http or https URL');
      return { url: parsed, address: null };
    },
  };
}

/** What is wrong with the URLs a provider connection is about to be given, as field errors under /connection. */
export async function providerUrlErrors(urls: { base_url: string; token_url: string | null }, policy: ProviderUrlPolicy): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  for (const field of ['base_url', 'token_url'] as const) {
    const url = urls[field];
    if (url === null || url === '') continue;
    try {
      await policy.target(url);
    } catch (error) {
      if (!(error instanceof ProviderUrlRefused)) throw error;
      errors.push({ pointer: `/connection/${field}`, detail: `${error.message}${policy.allowPrivate ? '' : ' (PROVIDER_ALLOW_PRIVATE_URLS is off)'}` });
    }
  }
  return errors;
}
