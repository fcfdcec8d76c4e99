import { isIPv4, isIPv6 } from 'node:net';
import { DependencyUnavailable } from '../shared/domain-errors.ts';
import type { FailureBucket, FailureLimiter } from '../shared/rate-limiter.ts';

export interface TokenThrottleLimits {
  /** Failed client authentications one address may make per window (in a burst, then refilling). */
  perAddress: number;
  /** Failed client authentications naming one client, from anywhere, per window. */
  perClient: number;
}

/**
 * The address a failure is counted against: an IPv4 address as it is, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so counting single addresses would count nothing).
 * IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is the IPv4 address it maps.
 */
export function clientAddressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (isIPv4(ip)) return ip;
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return ip;
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address, without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const toGroups = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group];
          // An embedded IPv4 address (::ffff:1.2.3.4 style) is the last two groups.
          const [a, b, c, d] = group.split('.').map(Number) as [number, number, number, number];
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const front = toGroups(head);
  const back = tail === undefined ? [] : toGroups(tail);
  const zeros = Array.from({ length: 8 - front.length - back.length }, () => '0');
  return [...front, ...zeros, ...back].map((group) => parseInt(group, 16).toString(16));
}

/**
 * Limits failed logins at the token endpoint, per address and per client id. An address or client
 * whose bucket is empty is answered 429 before its credentials are looked at, so a flood of wrong
 * secrets costs one Redis call each, not a database lookup. The per-client limit is the larger one:
 * a single address runs out first, so it takes several addresses to hold back a client by guessing
 * at its id. Fails closed like the API rate limit: with Redis unreachable, 503.
 */
export class TokenThrottle {
  constructor(
    private readonly limiter: FailureLimiter,
    private readonly limits: TokenThrottleLimits,
  ) {}

  private buckets(ip: string, clientId: string | undefined): FailureBucket[] {
    return [
      { key: `token-failures:address:${clientAddressKey(ip)}`, capacity: this.limits.perAddress },
      ...(clientId ? [{ key: `token-failures:client:${clientId.toLowerCase()}`, capacity: this.limits.perClient }] : []),
    ];
  }

  /** Seconds until this address (and this client, when named) may try again; 0 when it may now. */
  async retryAfterSeconds(ip: string, clientId: string | undefined): Promise<number> {
    try {
      return await this.limiter.retryAfterSeconds(this.buckets(ip, clientId));
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }

  /** `clientId` only for a client that exists: ids nobody holds get no bucket of their own. */
  async recordFailure(ip: string, clientId: string | undefined): Promise<void> {
    try {
      await this.limiter.recordFailure(this.buckets(ip, clientId));
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }
}
