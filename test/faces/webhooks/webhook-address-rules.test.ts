import { describe, expect, it } from 'vitest';
import { endpointUrlViolation, forbiddenAddressReason, SPECIAL_PURPOSE_BLOCKS } from '../../../src/faces/webhooks/webhook-address-rules.ts';

/**
 * The IANA Special-Purpose Address Registries, block by block, written out here independently of the
 * vendored CSV (src/faces/webhooks/iana-special-purpose-registries.ts, 2026-07-18): the CSV must parse to
 * exactly this, and every address of every block must be refused. An update of the registries
 * updates both.
 */
const IPV4_REGISTRY: Array<[string, string]> = [
  ['0.0.0.0/8', '"This network"'],
  ['0.0.0.0/32', '"This host on this network"'],
  ['10.0.0.0/8', 'Private-Use'],
  ['100.64.0.0/10', 'Shared Address Space'],
  ['127.0.0.0/8', 'Loopback'],
  ['169.254.0.0/16', 'Link Local'],
  ['172.16.0.0/12', 'Private-Use'],
  ['192.0.0.0/24', 'IETF Protocol Assignments'],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix'],
  ['192.0.0.8/32', 'IPv4 dummy address'],
  ['192.0.0.9/32', 'Port Control Protocol Anycast'],
  ['192.0.0.10/32', 'Traversal Using Relays around NAT Anycast'],
  ['192.0.0.170/32', 'NAT64/DNS64 Discovery'],
  ['192.0.0.171/32', 'NAT64/DNS64 Discovery'],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)'],
  ['192.88.99.2/32', '6a44-relay anycast address'],
  ['192.168.0.0/16', 'Private-Use'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service'],
  ['198.18.0.0/15', 'Benchmarking'],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3)'],
  ['240.0.0.0/4', 'Reserved'],
  ['255.255.255.255/32', 'Limited Broadcast'],
];
const IPV6_REGISTRY: Array<[string, string]> = [
  ['::1/128', 'Loopback Address'],
  ['::/128', 'Unspecified Address'],
  ['::ffff:0:0/96', 'IPv4-mapped Address'],
  ['64:ff9b::/96', 'IPv4-IPv6 Translat.'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translat.'],
  ['100::/64', 'Discard-Only Address Block'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix'],
  ['2001::/23', 'IETF Protocol Assignments'],
  ['2001::/32', 'TEREDO'],
  ['2001:1::1/128', 'Port Control Protocol Anycast'],
  ['2001:1::2/128', 'Traversal Using Relays around NAT Anycast'],
  ['2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast'],
  ['2001:2::/48', 'Benchmarking'],
  ['2001:3::/32', 'AMT'],
  ['2001:4:112::/48', 'AS112-v6'],
  ['2001:10::/28', 'Deprecated (previously ORCHID)'],
  ['2001:20::/28', 'ORCHIDv2'],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix'],
  ['2001:db8::/32', 'Documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service'],
  ['3fff::/20', 'Documentation'],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs'],
  ['fc00::/7', 'Unique-Local'],
  ['fe80::/10', 'Link-Local Unicast'],
];
/** Blocks whose addresses stand for an IPv4 host: refused when that host is. */
const CARRIERS = new Set(['::ffff:0:0/96', '64:ff9b::/96', '2002::/16']);

// Addresses as numbers, to take the first, middle and last address of a block.
function toBigInt(address: string): bigint {
  if (!address.includes(':')) return address.split('.').reduce((value, octet) => (value << 8n) | BigInt(octet), 0n);
  const [head, tail] = address.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - groups(head).length - groups(tail).length }, () => '0');
  return [...groups(head), ...zeros, ...groups(tail)].reduce((value, group) => (value << 16n) | BigInt(`0x${group}`), 0n);
}
function toText(value: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  return Array.from({ length: 8 }, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16)).join(':');
}
function samples(cidr: string): string[] {
  const [address, length] = cidr.split('/') as [string, string];
  const family = address.includes(':') ? 6 : 4;
  const size = BigInt(family === 4 ? 32 : 128) - BigInt(length);
  const first = toBigInt(address);
  const last = first + (1n << size) - 1n;
  return [...new Set([first, first + (last - first) / 2n, last])].map((value) => toText(value, family));
}
/** The most specific registry block holding an address, as the rules must name it. */
function expectedBlock(address: string): [string, string] | undefined {
  const family = address.includes(':') ? 6 : 4;
  const value = toBigInt(address);
  let best: [string, string] | undefined;
  let bestLength = -1;
  for (const [cidr, name] of family === 4 ? IPV4_REGISTRY : IPV6_REGISTRY) {
    const [base, length] = cidr.split('/') as [string, string];
    const size = BigInt(family === 4 ? 32 : 128) - BigInt(length);
    if (value >> size === toBigInt(base) >> size && Number(length) > bestLength) [best, bestLength] = [[cidr, name], Number(length)];
  }
  return best;
}

describe('the vendored IANA registries', () => {
  it('parse to exactly the blocks the registries list (footnote marks dropped, a cell of two blocks split)', () => {
    expect(SPECIAL_PURPOSE_BLOCKS.map((block) => [block.cidr, block.name])).toEqual([...IPV4_REGISTRY, ...IPV6_REGISTRY]);
    expect(SPECIAL_PURPOSE_BLOCKS.filter((block) => block.family === 4)).toHaveLength(IPV4_REGISTRY.length);
  });

  it.each([...IPV4_REGISTRY, ...IPV6_REGISTRY].filter(([cidr]) => !CARRIERS.has(cidr)))('refuses every address of %s (%s), named by the most specific block', (cidr) => {
    for (const address of samples(cidr)) {
      const [blockCidr, name] = expectedBlock(address)!;
      expect(forbiddenAddressReason(address), address).toBe(`${name} ${blockCidr}`);
    }
  });

  it.each([...CARRIERS])('refuses the addresses of %s that carry a refused IPv4 address (its first, middle and last do)', (cidr) => {
    for (const address of samples(cidr)) expect(forbiddenAddressReason(address), address).toMatch(/ inside /);
  });
});

describe('forbiddenAddressReason', () => {
  it.each([
    // Issue 31, item 8: the two that got through the hand-kept list.
    ['::ffff:0:7f00:1', 'Loopback 127.0.0.0/8 inside IPv4-translated Address ::ffff:0:0:0/96'],
    ['2001:20::1', 'ORCHIDv2 2001:20::/28'],
    ['2001:2f:ffff:ffff:ffff:ffff:ffff:ffff', 'ORCHIDv2 2001:20::/28'],
    ['::ffff:0:10.1.2.3', 'Private-Use 10.0.0.0/8 inside IPv4-translated Address ::ffff:0:0:0/96'],
    ['127.0.0.1', 'Loopback 127.0.0.0/8'],
    ['10.0.0.1', 'Private-Use 10.0.0.0/8'],
    ['172.31.255.255', 'Private-Use 172.16.0.0/12'],
    ['100.64.0.1', 'Shared Address Space 100.64.0.0/10'],
    ['169.254.169.254', 'Link Local 169.254.0.0/16'],
    ['0.0.0.0', '"This host on this network" 0.0.0.0/32'],
    ['0.1.2.3', '"This network" 0.0.0.0/8'],
    ['192.0.0.9', 'Port Control Protocol Anycast 192.0.0.9/32'],
    ['192.0.0.200', 'IETF Protocol Assignments 192.0.0.0/24'],
    ['224.0.0.251', 'Multicast 224.0.0.0/4'],
    ['239.255.255.250', 'Multicast 224.0.0.0/4'],
    ['255.255.255.255', 'Limited Broadcast 255.255.255.255/32'],
    ['255.255.255.254', 'Reserved 240.0.0.0/4'],
    ['::1', 'Loopback Address ::1/128'],
    ['::', 'Unspecified Address ::/128'],
    ['fe80::1', 'Link-Local Unicast fe80::/10'],
    ['fe80::1%eth0', 'Link-Local Unicast fe80::/10'],
    ['fd12:3456:789a::1', 'Unique-Local fc00::/7'],
    ['ff02::1', 'Multicast ff00::/8'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'TEREDO 2001::/32'],
    ['2001:1::3', 'DNS-SD Service Registration Protocol Anycast 2001:1::3/128'],
    ['2001:1::4', 'IETF Protocol Assignments 2001::/23'],
    ['64:ff9b:1::808:808', 'IPv4-IPv6 Translat. 64:ff9b:1::/48'],
    ['100:0:0:1::1', 'Dummy IPv6 Prefix 100:0:0:1::/64'],
    ['3fff::1', 'Documentation 3fff::/20'],
    ['5f00::1', 'Segment Routing (SRv6) SIDs 5f00::/16'],
    ['::ffff:127.0.0.1', 'Loopback 127.0.0.0/8 inside IPv4-mapped Address ::ffff:0:0/96'],
    ['::ffff:7f00:1', 'Loopback 127.0.0.0/8 inside IPv4-mapped Address ::ffff:0:0/96'],
    ['64:ff9b::a9fe:a9fe', 'Link Local 169.254.0.0/16 inside IPv4-IPv6 Translat. 64:ff9b::/96'],
    ['2002:c0a8:0101::1', 'Private-Use 192.168.0.0/16 inside 6to4 2002::/16'],
    ['::127.0.0.1', 'Loopback 127.0.0.0/8 inside IPv4-compatible Address ::/96'],
    // The IPv6 Address Space registry gives only 2000::/3 to global unicast.
    ['fec0::1', 'not global unicast (outside 2000::/3)'],
    ['4000::1', 'not global unicast (outside 2000::/3)'],
    ['1::1', 'not global unicast (outside 2000::/3)'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason);
  });

  /** The IPv6 forms that carry an IPv4 address, for an address a.b.c.d. */
  const carried = (ipv4: string) => {
    const [a, b, c, d] = ipv4.split('.').map(Number) as [number, number, number, number];
    const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
    return [`::ffff:${ipv4}`, `::ffff:0:${ipv4}`, `64:ff9b::${ipv4}`, `2002:${hex(a, b)}:${hex(c, d)}::1`, `::${ipv4}`];
  };

  it.each(IPV4_REGISTRY.map(([cidr]) => cidr))('refuses the IPv4-mapped, -translated, -compatible, NAT64 and 6to4 forms of %s', (cidr) => {
    for (const address of samples(cidr)) {
      for (const form of carried(address)) expect(forbiddenAddressReason(form), form).not.toBeNull();
    }
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '11.0.0.1',
    '192.0.1.1',
    '192.88.98.255',
    '2606:4700:4700::1111',
    '2a00:1450:4009:81f::200e',
    '2001:4860:4860::8888',
  ])('allows the public address %s', (address) => {
    expect(forbiddenAddressReason(address)).toBeNull();
  });

  it.each(carried('8.8.8.8'))('allows %s, a form of the public address 8.8.8.8', (address) => {
    expect(forbiddenAddressReason(address)).toBeNull();
  });

  it('refuses text that is not an IP address', () => {
    expect(forbiddenAddressReason('localhost')).toBe('not an IP address');
  });
});

describe('endpointUrlViolation', () => {
  it('takes a public https URL in either mode', () => {
    expect(endpointUrlViolation('https://hooks.example.com/salary-deductions?x=1', false)).toBeNull();
    expect(endpointUrlViolation('https://93.184.216.34:8443/hook', false)).toBeNull();
  });

  it('refuses http, other schemes and relative URLs unless private targets are allowed (then http only)', () => {
    expect(endpointUrlViolation('http://hooks.example.com/', false)).toBe('must be an https URL');
    expect(endpointUrlViolation('http://hooks.example.com/', true)).toBeNull();
    expect(endpointUrlViolation('ftp://hooks.example.com/', true)).toBe('must be an http or https URL');
    expect(endpointUrlViolation('/hooks', true)).toBe('must be an absolute URL');
  });

  it('refuses credentials in the URL in either mode', () => {
    expect(endpointUrlViolation('https://user:secret@hooks.example.com/', true)).toBe('must not contain credentials');
  });

  it('refuses special-purpose IP literals, bracketed IPv6 included, unless allowed', () => {
    expect(endpointUrlViolation('https://127.0.0.1/hook', false)).toBe('must not point at a special-purpose address (127.0.0.1: Loopback 127.0.0.0/8)');
    expect(endpointUrlViolation('https://[::1]:8443/hook', false)).toContain('Loopback Address');
    expect(endpointUrlViolation('https://[::ffff:169.254.169.254]/', false)).toContain('Link Local');
    expect(endpointUrlViolation('https://10.0.0.8/', false)).toContain('Private-Use');
    // Issue 31, item 8, as reported.
    expect(endpointUrlViolation('https://[::ffff:0:7f00:1]/', false)).toContain('Loopback 127.0.0.0/8 inside IPv4-translated Address');
    expect(endpointUrlViolation('https://[2001:20::1]/', false)).toContain('ORCHIDv2');
    expect(endpointUrlViolation('https://127.0.0.1/hook', true)).toBeNull();
  });
});
