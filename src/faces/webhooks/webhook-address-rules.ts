import { isIP } from 'node:net';
import { parse } from 'csv-parse/sync';
import { IPV4_SPECIAL_PURPOSE_REGISTRY_CSV, IPV6_SPECIAL_PURPOSE_REGISTRY_CSV } from './iana-special-purpose-registries.ts';

/**
 * Which addresses a webhook may never reach unless the operator allows private targets: anything
 * that is not an ordinary public unicast address on the internet. A webhook URL is chosen by a
 * customer, so without this rule it would be a way to make our servers call into our own network
 * (SSRF).
 *
 * The list is IANA's, not ours: every block of the IPv4 and IPv6 Special-Purpose Address Registries
 * (vendored in iana-special-purpose-registries.ts) is refused, the globally reachable ones too. A
 * receiver of webhooks is an ordinary host, and none lives in an anycast service block (AS112, AMT,
 * PCP, TURN), a non-routable identifier block (ORCHIDv2, DETs) or a documentation block; a hand-kept
 * list is how `::ffff:0:0:0/96` and `2001:20::/28` slipped through. Beside the registries: multicast
 * (its own registries), and IPv6 outside 2000::/3, the only space the IPv6 Address Space registry
 * gives to global unicast.
 *
 * Addresses that carry an IPv4 address (IPv4-mapped, IPv4-translated, IPv4-compatible, NAT64, 6to4)
 * are judged by the IPv4 address they carry, so each form of a refused IPv4 address is refused.
 */
interface AddressBlock {
  /** As the registry writes it, e.g. `127.0.0.0/8`. */
  cidr: string;
  /** The registry's name for it, e.g. `Loopback`. */
  name: string;
  bytes: number[];
  prefixLength: number;
}

export interface SpecialPurposeBlock {
  cidr: string;
  name: string;
  family: 4 | 6;
}

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

function toBlock(cidr: string, name: string): AddressBlock {
  const [address, length] = cidr.split('/') as [string, string];
  return { cidr, name, bytes: isIP(address) === 4 ? ipv4Bytes(address) : ipv6Bytes(address), prefixLength: Number(length) };
}

/**
 * Every block a registry CSV lists, in its order. An `Address Block` cell may carry a footnote mark
 * (`192.0.0.0/24 [2]`) and may hold more than one block (`192.0.0.170/32, 192.0.0.171/32`).
 */
export function parseSpecialPurposeRegistry(csv: string): SpecialPurposeBlock[] {
  const rows = parse(csv, { columns: true, skip_empty_lines: true }) as Array<Record<string, string>>;
  return rows.flatMap((row) =>
    (row['Address Block'] ?? '')
      .replace(/\[\d+\]/g, '')
      .split(',')
      .map((cidr) => cidr.trim())
      .filter(Boolean)
      .map((cidr) => ({ cidr, name: row['Name']!.trim(), family: isIP(cidr.split('/')[0]!) === 4 ? (4 as const) : (6 as const) })),
  );
}

/** Both registries' blocks, IPv4 first. */
export const SPECIAL_PURPOSE_BLOCKS: readonly SpecialPurposeBlock[] = [
  ...parseSpecialPurposeRegistry(IPV4_SPECIAL_PURPOSE_REGISTRY_CSV),
  ...parseSpecialPurposeRegistry(IPV6_SPECIAL_PURPOSE_REGISTRY_CSV),
];

/** Registry blocks whose addresses stand for an IPv4 host, and where in the 16 bytes it sits. */
const IPV4_CARRIERS: ReadonlyArray<{ cidr: string; name: string; ipv4At: number }> = [
  { cidr: '::ffff:0:0/96', name: 'IPv4-mapped Address', ipv4At: 12 },
  { cidr: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', ipv4At: 12 },
  { cidr: '2002::/16', name: '6to4', ipv4At: 2 },
  // Not in the registry, and carriers just the same: SIIT's IPv4-translated form (RFC 2765) and the
  // deprecated IPv4-compatible form (RFC 4291), which ::/128 and ::1/128 (registry blocks) sit in.
  { cidr: '::ffff:0:0:0/96', name: 'IPv4-translated Address', ipv4At: 12 },
  { cidr: '::/96', name: 'IPv4-compatible Address', ipv4At: 12 },
];
const carrierCidrs = new Set(IPV4_CARRIERS.map((carrier) => carrier.cidr));

/** What the registries leave to other registries: multicast. */
const MULTICAST_V4 = toBlock('224.0.0.0/4', 'Multicast');
const MULTICAST_V6 = toBlock('ff00::/8', 'Multicast');
const GLOBAL_UNICAST_V6 = toBlock('2000::/3', 'Global Unicast');

const ipv4Blocks = [...SPECIAL_PURPOSE_BLOCKS.filter((block) => block.family === 4).map((block) => toBlock(block.cidr, block.name)), MULTICAST_V4];
const ipv6Blocks = [
  ...SPECIAL_PURPOSE_BLOCKS.filter((block) => block.family === 6 && !carrierCidrs.has(block.cidr)).map((block) => toBlock(block.cidr, block.name)),
  MULTICAST_V6,
];
const ipv4Carriers = IPV4_CARRIERS.map((carrier) => ({ ...carrier, block: toBlock(carrier.cidr, carrier.name) }));

function matchesPrefix(address: readonly number[], prefix: readonly number[], prefixLength: number): boolean {
  for (let bit = 0; bit < prefixLength; bit += 8) {
    const bitsHere = Math.min(8, prefixLength - bit);
    const mask = (0xff << (8 - bitsHere)) & 0xff;
    const index = bit / 8;
    if ((address[index]! & mask) !== (prefix[index]! & mask)) return false;
  }
  return true;
}

/** The most specific block holding the address: `192.0.0.9` is PCP Anycast before it is IETF Protocol Assignments. */
function mostSpecific(bytes: readonly number[], blocks: readonly AddressBlock[]): AddressBlock | undefined {
  let best: AddressBlock | undefined;
  for (const block of blocks) {
    if (matchesPrefix(bytes, block.bytes, block.prefixLength) && (!best || block.prefixLength > best.prefixLength)) best = block;
  }
  return best;
}

const describeBlock = (block: AddressBlock) => `${block.name} ${block.cidr}`;

function forbiddenIpv4Reason(bytes: readonly number[]): string | null {
  const block = mostSpecific(bytes, ipv4Blocks);
  return block ? describeBlock(block) : null;
}

/**
 * Why a webhook may not be delivered to this IP address (the block that holds it, as the registry
 * names it: `Loopback 127.0.0.0/8`), or null when it is an ordinary public address. Text that is
 * not an IP address at all is refused too.
 */
export function forbiddenAddressReason(address: string): string | null {
  const family = isIP(address.split('%')[0]!);
  if (family === 4) return forbiddenIpv4Reason(ipv4Bytes(address));
  if (family !== 6) return 'not an IP address';
  const bytes = ipv6Bytes(address);
  const block = mostSpecific(bytes, ipv6Blocks);
  if (block) return describeBlock(block);
  const carrier = ipv4Carriers.find((candidate) => matchesPrefix(bytes, candidate.block.bytes, candidate.block.prefixLength));
  if (carrier) {
    const embedded = forbiddenIpv4Reason(bytes.slice(carrier.ipv4At, carrier.ipv4At + 4));
    return embedded ? `${embedded} inside ${describeBlock(carrier.block)}` : null;
  }
  if (!matchesPrefix(bytes, GLOBAL_UNICAST_V6.bytes, GLOBAL_UNICAST_V6.prefixLength)) return 'not global unicast (outside 2000::/3)';
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
    if (reason) return `must not point at a special-purpose address (${host}: ${reason})`;
  }
  return null;
}
