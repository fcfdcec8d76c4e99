import { describe, expect, it } from 'vitest';
import { endpointUrlViolation, forbiddenAddressReason } from '../../src/webhooks/webhook-address-rules.ts';

describe('forbiddenAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.20', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'this-network'],
    ['224.0.0.251', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['192.0.2.10', 'documentation'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd12:3456:789a::1', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo tunnel'],
    ['::ffff:127.0.0.1', 'loopback (inside IPv6)'],
    ['::ffff:7f00:1', 'loopback (inside IPv6)'],
    ['::ffff:10.1.2.3', 'private (inside IPv6)'],
    ['64:ff9b::a9fe:a9fe', 'link-local (inside IPv6)'],
    ['2002:c0a8:0101::1', 'private (inside IPv6)'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(forbiddenAddressReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '11.0.0.1', '2606:4700:4700::1111', '2a00:1450:4009:81f::200e', '::ffff:8.8.8.8', '2002:0808:0808::1', '64:ff9b::808:808'])(
    'allows the public address %s',
    (address) => {
      expect(forbiddenAddressReason(address)).toBeNull();
    },
  );

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

  it('refuses private IP literals, bracketed IPv6 included, unless allowed', () => {
    expect(endpointUrlViolation('https://127.0.0.1/hook', false)).toContain('loopback');
    expect(endpointUrlViolation('https://[::1]:8443/hook', false)).toContain('loopback');
    expect(endpointUrlViolation('https://[::ffff:169.254.169.254]/', false)).toContain('link-local');
    expect(endpointUrlViolation('https://10.0.0.8/', false)).toContain('private');
    expect(endpointUrlViolation('https://127.0.0.1/hook', true)).toBeNull();
  });
});
