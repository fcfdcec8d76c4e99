import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { endpointUrlViolation, forbiddenAddressReason, hostOfUrl } from './webhook-address-rules.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to; injectable so tests can play a hostile DNS server. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

export class WebhookTargetRefused extends Error {
  override readonly name = 'WebhookTargetRefused';
}

/**
 * Where a delivery may connect. With `address` set, the connection must go to exactly that address
 * (the one that was checked), never to a fresh DNS answer: otherwise a host could answer a public
 * address to the check and 127.0.0.1 to the connection (DNS rebinding).
 */
export interface WebhookTarget {
  url: URL;
  address: ResolvedAddress | null;
}

export interface TargetPolicy {
  allowPrivate: boolean;
  resolveHost: HostResolver;
}

/**
 * Checks an endpoint URL and, unless private targets are allowed, resolves its host and refuses it
 * when any answer is not a public address (a mixed answer could be steered to the private one).
 */
export async function resolveWebhookTarget(rawUrl: string, policy: TargetPolicy): Promise<WebhookTarget> {
  const violation = endpointUrlViolation(rawUrl, policy.allowPrivate);
  if (violation) throw new WebhookTargetRefused(`The URL ${violation}`);
  const url = new URL(rawUrl);
  if (policy.allowPrivate) return { url, address: null };

  const host = hostOfUrl(url);
  const family = isIP(host);
  if (family !== 0) return { url, address: { address: host, family: family === 6 ? 6 : 4 } };

  let answers: ResolvedAddress[];
  try {
    answers = await policy.resolveHost(host);
  } catch (error) {
    throw new WebhookTargetRefused(`The host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
  }
  if (answers.length === 0) throw new WebhookTargetRefused(`The host ${host} does not resolve`);
  for (const answer of answers) {
    const reason = forbiddenAddressReason(answer.address);
    if (reason) throw new WebhookTargetRefused(`The host ${host} resolves to a special-purpose address (${answer.address}: ${reason})`);
  }
  return { url, address: answers[0]! };
}
