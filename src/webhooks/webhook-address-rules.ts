import { isIP } from 'node:net';

/**
 * Which addresses a webhook may never reach unless the operator allows private targets: anything
 * that is not a public unicast address on the internet. A webhook URL is chosen by a customer, so
 * without this rule it would be a way to make our servers call into our own network (SSRF).
 */
interface ForbiddenRange {
  bytes: number[];
  prefixLength: number;
  label: string;
}

const IPV4_RANGES: ReadonlyArray<[string, string]> = [
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
];

const IPV6_RANGES: ReadonlyArray<[string, string]> = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['100::/64', 'discard'],
  // Teredo hides the client's IPv4 address, so its real end cannot be checked.
  ['2001::/32', 'Teredo tunnel'],
  ['2001:db8::/32', 'documentation'],
  ['64:ff9b:1::/48', 'local NAT64'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

/** IPv6 forms that carry an IPv4 address: judged by that address, wherever it sits. */
const IPV4_CARRIERS: ReadonlyArray<{ prefix: string; prefixLength: number; ipv4At: number }> = [
  { prefix: '::ffff:0:0', prefixLength: 96, ipv4At: 12 }, // IPv4-mapped
  { prefix: '::', prefixLength: 96, ipv4At: 12 }, // IPv4-compatible (deprecated)
  { prefix: '64:ff9b::', prefixLength: 96, ipv4At: 12 }, // NAT64
  { prefix: '2002::', prefixLength: 16, ipv4At: 2 }, // 6to4
];

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

/** Expands any valid IPv6 text (with `::`, an embedded dotted quad or a zone) to its 16 bytes. */
function ipv6Bytes(address: string): number[] {
  let text = address.split('%')[0]!;
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a, b, c, d] = ipv4Bytes(tail) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const headGroups = groups(head);
  const restGroups = groups(rest);
  const zeros = rest === undefined ? [] : Array.from({ length: 8 - headGroups.length - restGroups.length }, () => '0');
  return [...headGroups, ...zeros, ...restGroups].flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

function parseRange(cidr: string, label: string, toBytes: (address: string) => number[]): ForbiddenRange {
  const [address, length] = cidr.split('/') as [string, string];
  return { bytes: toBytes(address), prefixLength: Number(length), label };
}

function matchesPrefix(address: readonly number[], prefix: readonly number[], prefixLength: number): boolean {
  for (let bit = 0; bit < prefixLength; bit += 8) {
    const bitsHere = Math.min(8, prefixLength - bit);
    const mask = (0xff << (8 - bitsHere)) & 0xff;
    const index = bit / 8;
    if ((address[index]! & mask) !== (prefix[index]! & mask)) return false;
  }
  return true;
}

const ipv4Ranges = IPV4_RANGES.map(([cidr, label]) => parseRange(cidr, label, ipv4Bytes));
const ipv6Ranges = IPV6_RANGES.map(([cidr, label]) => parseRange(cidr, label, ipv6Bytes));
const ipv4Carriers = IPV4_CARRIERS.map((carrier) => ({ ...carrier, bytes: ipv6Bytes(carrier.prefix) }));

function forbiddenIpv4Reason(bytes: readonly number[]): string | null {
  return ipv4Ranges.find((range) => matchesPrefix(bytes, range.bytes, range.prefixLength))?.label ?? null;
}

/**
 * Why a webhook may not be delivered to this IP address (`loopback`, `private`, `link-local`, ...),
 * or null when it is a public address. Text that is not an IP address at all is refused too.
 */
export function forbiddenAddressReason(address: string): string | null {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return forbiddenIpv4Reason(ipv4Bytes(address));
  if (family !== 6) return 'not an IP address';
  const bytes = ipv6Bytes(address);
  const range = ipv6Ranges.find((candidate) => matchesPrefix(bytes, candidate.bytes, candidate.prefixLength));
  if (range) return range.label;
  for (const carrier of ipv4Carriers) {
    if (matchesPrefix(bytes, carrier.bytes, carrier.prefixLength)) {
      const embedded = forbiddenIpv4Reason(bytes.slice(carrier.ipv4At, carrier.ipv4At + 4));
      if (embedded) return `${embedded} (inside IPv6)`;
    }
  }
  return null;
}

/** `[::1]` in a URL is `::1` to the resolver and to the rules above. */
export function hostOfUrl(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * What is wrong with an endpoint URL on its face (before any DNS): it must be absolute http(s),
 * https unless private targets are allowed, carry no credentials (they would end up in logs), and
 * an IP literal must itself be public. Null when nothing is.
 */
export function endpointUrlViolation(rawUrl: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return allowPrivate ? 'must be an http or https URL' : 'must be an https URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (!url.hostname) return 'must name a host';
  const host = hostOfUrl(url);
  if (!allowPrivate && isIP(host)) {
    const reason = forbiddenAddressReason(host);
    if (reason) return `must not point at a ${reason} address (${host})`;
  }
  return null;
}
