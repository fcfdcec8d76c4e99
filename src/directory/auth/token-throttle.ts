import { isIPv4, isIPv6 } from 'node:net';
import { DependencyUnavailable } from '../../platform/shared/domain-errors.ts';
import type { FailureBucket, FailureLimiter } from '../../platform/shared/rate-limiter.ts';

export interface TokenThrottleLimits {
  /** Failed client authentications one address may make per window (in a burst, then refilling). */
  perAddress: number;
  /**
   * Failed client authentications naming one client, from anywhere, per window. Spending them does
   * not lock the client out: it makes every address that has failed for the client wait (see
   * TokenThrottle), while an address that has not may still present the right secret.
   */
  perClient: number;
}

/**
 * The address a failure is counted against: an IPv4 address as it is, an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so counting single addresses would count nothing), or
 * by a shorter prefix when asked (`ipv6PrefixBits`, 16 to 64: the console's sign-in counts a /48,
 * a site). IPv4-mapped IPv6 (`::ffff:192.0.2.1`) is the IPv4 address it maps.
 */
export function clientAddressKey(ip: string, ipv6PrefixBits = 64): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped && isIPv4(mapped)) return mapped;
  if (isIPv4(ip)) return ip;
  const address = ip.split('%')[0]!;
  if (!isIPv6(address)) return ip;
  if (!Number.isInteger(ipv6PrefixBits) || ipv6PrefixBits < 16 || ipv6PrefixBits > 64) throw new RangeError(`an IPv6 prefix of ${ipv6PrefixBits} bits`);
  const kept = Math.ceil(ipv6PrefixBits / 16);
  const groups = ipv6Groups(address).slice(0, kept);
  // The last group kept loses its bits past the prefix (a /56 keeps the high byte of the fourth).
  const spare = kept * 16 - ipv6PrefixBits;
  groups[kept - 1] = ((parseInt(groups[kept - 1]!, 16) >> spare) << spare).toString(16);
  return `${groups.join(':')}::/${ipv6PrefixBits}`;
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
 * The rule for a client under attack: once the failures naming a client, from all addresses
 * together, have used up its bucket, an address that has itself failed for that client this window
 * must wait until that failure has aged out. An address that has not failed for it is not held
 * back, so failures from other addresses never refuse the client's right secret from its own
 * address. Before the client's bucket is empty the per-address bucket alone bounds each address.
 */
export function clientAttackWaitSeconds(clientBucketWait: number, addressFailedForClientWait: number): number {
  return clientBucketWait > 0 ? addressFailedForClientWait : 0;
}

/**
 * Limits failed logins at the token endpoint. Three failure buckets: per address (every failure
 * from it, whatever client it names), per client id (every failure naming it, from anywhere), and
 * per client and address (one failure: whether this address has failed for this client lately).
 * An address whose own bucket is empty is answered 429 before its credentials are looked at, so a
 * flood of wrong secrets costs a Redis call each, not a database lookup. An empty client bucket
 * does not refuse the client (anyone who knows its id could otherwise keep it from getting
 * tokens): it refuses, for that client, the addresses that have failed for it
 * (clientAttackWaitSeconds). So many addresses guessing at one client get at most perClient
 * guesses, then one more per address never used before. Fails closed like the API rate limit: with
 * Redis unreachable, 503.
 */
export class TokenThrottle {
  constructor(
    private readonly limiter: FailureLimiter,
    private readonly limits: TokenThrottleLimits,
  ) {}

  private addressBucket(ip: string): FailureBucket {
    return { key: `token-failures:address:${clientAddressKey(ip)}`, capacity: this.limits.perAddress };
  }

  private clientBucket(clientId: string): FailureBucket {
    return { key: `token-failures:client:${clientId.toLowerCase()}`, capacity: this.limits.perClient };
  }

  /** One failure refills over the whole window: "has this address failed for this client lately". */
  private clientAddressBucket(ip: string, clientId: string): FailureBucket {
    return { key: `token-failures:client-address:${clientId.toLowerCase()}:${clientAddressKey(ip)}`, capacity: 1 };
  }

  /** Seconds until this address may try again (for this client, when named); 0 when it may now. */
  async retryAfterSeconds(ip: string, clientId: string | undefined): Promise<number> {
    try {
      const addressWait = await this.limiter.retryAfterSeconds([this.addressBucket(ip)]);
      if (addressWait > 0 || !clientId) return addressWait;
      const [clientWait, pairWait] = await Promise.all([
        this.limiter.retryAfterSeconds([this.clientBucket(clientId)]),
        this.limiter.retryAfterSeconds([this.clientAddressBucket(ip, clientId)]),
      ]);
      return clientAttackWaitSeconds(clientWait, pairWait);
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }

  /** `clientId` only for a client that exists: ids nobody holds get no bucket of their own. */
  async recordFailure(ip: string, clientId: string | undefined): Promise<void> {
    const buckets = [this.addressBucket(ip), ...(clientId ? [this.clientBucket(clientId), this.clientAddressBucket(ip, clientId)] : [])];
    try {
      await this.limiter.recordFailure(buckets);
    } catch (error) {
      throw new DependencyUnavailable('redis', { cause: error });
    }
  }
}
