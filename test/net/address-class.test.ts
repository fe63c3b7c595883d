// String classification only: nothing in this file resolves a name or opens a socket.
import { describe, expect, it } from 'vitest';
import { classifyAddress, classifyHostname } from '../../src/net/address-class.js';

const PUBLIC = 'public';

/** [address, expected range, or 'public'] */
const addressVectors: readonly (readonly [string, string])[] = [
  // IPv4: loopback, private, link-local, CGNAT
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['127.53.0.1', 'loopback'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['169.254.0.1', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.255', 'carrierGradeNat'],
  // IPv4: unspecified, multicast, broadcast, reserved, benchmarking, documentation
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['192.0.0.1', 'reserved'],
  ['192.0.0.170', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  // IPv4: public, including the neighbours of every blocked range
  ['8.8.8.8', PUBLIC],
  ['1.1.1.1', PUBLIC],
  ['9.255.255.255', PUBLIC],
  ['11.0.0.0', PUBLIC],
  ['172.15.255.255', PUBLIC],
  ['172.32.0.0', PUBLIC],
  ['192.167.255.255', PUBLIC],
  ['192.169.0.0', PUBLIC],
  ['169.253.255.255', PUBLIC],
  ['169.255.0.0', PUBLIC],
  ['100.63.255.255', PUBLIC],
  ['100.128.0.0', PUBLIC],
  ['126.255.255.255', PUBLIC],
  ['128.0.0.0', PUBLIC],
  ['1.0.0.0', PUBLIC],
  ['223.255.255.255', PUBLIC],
  ['198.17.255.255', PUBLIC],
  ['198.20.0.0', PUBLIC],
  ['192.0.1.0', PUBLIC],
  // IPv6: plain special ranges
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456:789a::1', 'uniqueLocal'],
  ['fe80::1', 'linkLocal'],
  ['febf:ffff::1', 'linkLocal'],
  ['fec0::1', 'siteLocal'],
  ['feff::1', 'siteLocal'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['2001:db8:ffff::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001::1', 'teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ['2001:2::1', 'benchmarking'],
  ['2001:20::1', 'reserved'],
  ['100::1', 'discard'],
  ['5f00::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['::ffff:0:7f00:1', 'reserved'],
  ['1::1', 'reserved'],
  // IPv6: forms that embed an IPv4 address are judged by it
  ['::ffff:127.0.0.1', 'ipv4Mapped(loopback)'],
  ['::ffff:7f00:1', 'ipv4Mapped(loopback)'],
  ['::FFFF:7F00:0001', 'ipv4Mapped(loopback)'],
  ['::ffff:169.254.169.254', 'ipv4Mapped(linkLocal)'],
  ['::ffff:a9fe:a9fe', 'ipv4Mapped(linkLocal)'],
  ['::ffff:10.0.0.1', 'ipv4Mapped(private)'],
  ['::ffff:0.0.0.0', 'ipv4Mapped(unspecified)'],
  ['::ffff:8.8.8.8', PUBLIC],
  ['::127.0.0.1', 'ipv4Compatible(loopback)'],
  ['::7f00:1', 'ipv4Compatible(loopback)'],
  ['::ffff:0:127.0.0.1', 'reserved'],
  ['2606:4700::8.8.8.8', PUBLIC],
  ['::a9fe:a9fe', 'ipv4Compatible(linkLocal)'],
  ['::169.254.169.254', 'ipv4Compatible(linkLocal)'],
  ['::c0a8:1', 'ipv4Compatible(private)'],
  ['::2', 'ipv4Compatible(unspecified)'],
  ['::808:808', PUBLIC],
  ['64:ff9b::a9fe:a9fe', 'nat64(linkLocal)'],
  ['64:ff9b::127.0.0.1', 'nat64(loopback)'],
  ['64:ff9b::192.168.1.1', 'nat64(private)'],
  ['64:ff9b::8.8.8.8', PUBLIC],
  ['64:ff9b:1::8.8.8.8', 'nat64LocalUse'],
  ['64:ff9b:1::1', 'nat64LocalUse'],
  ['2002:a9fe:a9fe::', '6to4(linkLocal)'],
  ['2002:7f00:1::1', '6to4(loopback)'],
  ['2002:c0a8:101::', '6to4(private)'],
  ['2002:0:0::1', '6to4(unspecified)'],
  ['2002:808:808::1', PUBLIC],
  // IPv6: public
  ['2606:4700::1', PUBLIC],
  ['2606:4700:4700::1111', PUBLIC],
  ['2a00:1450:4001:80b::200e', PUBLIC],
  ['2001:4860:4860::8888', PUBLIC],
  ['2001:200::1', PUBLIC],
  ['3ffe::1', PUBLIC],
  // brackets and zone ids are stripped
  ['[::1]', 'loopback'],
  ['[::ffff:127.0.0.1]', 'ipv4Mapped(loopback)'],
  ['[2606:4700::1]', PUBLIC],
  ['fe80::1%eth0', 'linkLocal'],
  ['[fe80::1%eth0]', 'linkLocal'],
  ['fe80::1%25eth0', 'linkLocal'],
  ['::1%lo', 'loopback'],
  // anything Node would not dial as a literal fails closed
  ['', 'unparseable'],
  ['127.1', 'unparseable'],
  ['2852039166', 'unparseable'],
  ['0x7f000001', 'unparseable'],
  ['0177.0.0.1', 'unparseable'],
  ['010.0.0.1', 'unparseable'],
  ['08.08.08.08', 'unparseable'],
  ['256.0.0.1', 'unparseable'],
  ['1.2.3.4.5', 'unparseable'],
  ['example.com', 'unparseable'],
  ['localhost', 'unparseable'],
  ['::ffff:127.1', 'unparseable'],
  ['1:2:3:4:5:6:7:8:9', 'unparseable'],
  ['[::1', 'unparseable'],
  [' 8.8.8.8', 'unparseable'],
  ['8.8.8.8%eth0', 'unparseable'],
];

/** [URL, expected classification of `new URL(url).hostname`] */
const urlVectors: readonly (readonly [string, string])[] = [
  ['http://2852039166/', 'linkLocal'],
  ['http://0xA9FEA9FE/', 'linkLocal'],
  ['http://0251.0376.0251.0376/', 'linkLocal'],
  ['http://0xa9.0xfe.0xa9.0xfe/', 'linkLocal'],
  ['http://169.254.169.254/latest/meta-data/', 'linkLocal'],
  ['http://127.1/', 'loopback'],
  ['http://0x7f.1/', 'loopback'],
  ['http://127.0.0.1./', 'loopback'],
  ['http://%31%32%37.0.0.1/', 'loopback'],
  ['http://\uff11\uff12\uff17.0.0.1/', 'loopback'],
  ['http://0/', 'unspecified'],
  ['http://0.0.0.0:8080/', 'unspecified'],
  ['http://10.1/', 'private'],
  ['http://[::169.254.169.254]/', 'ipv4Compatible(linkLocal)'],
  ['http://[::ffff:127.0.0.1]/', 'ipv4Mapped(loopback)'],
  ['http://[::ffff:7f00:1]/', 'ipv4Mapped(loopback)'],
  ['http://[64:ff9b::a9fe:a9fe]/', 'nat64(linkLocal)'],
  ['http://[64:ff9b::169.254.169.254]/', 'nat64(linkLocal)'],
  ['http://[2002:a9fe:a9fe::]/', '6to4(linkLocal)'],
  ['http://[0:0:0:0:0:0:0:1]/', 'loopback'],
  ['http://[::]/', 'unspecified'],
  ['http://[fd00::1]:3000/', 'uniqueLocal'],
  ['http://[2001:db8::1]/', 'documentation'],
  ['http://localhost/', 'localhostName'],
  ['http://LOCALHOST:8080/', 'localhostName'],
  ['http://localhost./', 'localhostName'],
  ['http://api.localhost/', 'localhostName'],
  ['http://a.b.LocalHost./', 'localhostName'],
  ['https://8.8.8.8/', PUBLIC],
  ['https://[2606:4700::1]/', PUBLIC],
  ['https://example.com/', 'name'],
  ['https://metadata.google.internal/', 'name'],
  ['https://localhost.example.com/', 'name'],
  ['https://mylocalhost/', 'name'],
  ['https://xn--bcher-kva.example/', 'name'],
];

function summary(result: { kind: string; range?: string }): string {
  return result.kind === 'blocked' ? (result.range ?? '') : result.kind;
}

describe('classifyAddress', () => {
  it.each(addressVectors)('classifies %s as %s', (address, expected) => {
    expect(summary(classifyAddress(address))).toBe(expected);
  });

  it('covers more than a hundred vectors across both tables', () => {
    expect(addressVectors.length + urlVectors.length).toBeGreaterThan(100);
  });
});

describe('classifyHostname after WHATWG URL normalisation', () => {
  it.each(urlVectors)('classifies the host of %s as %s', (url, expected) => {
    expect(summary(classifyHostname(new URL(url).hostname))).toBe(expected);
  });

  it('never sees a zone id in a URL: WHATWG refuses [fe80::1%25eth0]', () => {
    expect(() => new URL('http://[fe80::1%25eth0]/')).toThrow();
    expect(summary(classifyHostname('[fe80::1%25eth0]'))).toBe('linkLocal');
  });
});

describe('classifyHostname on strings WHATWG would not produce', () => {
  const vectors: readonly (readonly [string, string])[] = [
    ['', 'unparseable'],
    ['.', 'unparseable'],
    ['a..b', 'unparseable'],
    ['exa mple.com', 'unparseable'],
    ['evil.com/x', 'unparseable'],
    ['user@host', 'unparseable'],
    ['-leading.example', 'unparseable'],
    ['[::1', 'unparseable'],
    ['127.1', 'unparseable'],
    ['1.2.3.0x10', 'unparseable'],
    ['0x7f000001', 'unparseable'],
    ['::1', 'loopback'],
    ['fe80::1%eth0', 'linkLocal'],
    ['127.0.0.1', 'loopback'],
    ['example.com.', 'name'],
  ];

  it.each(vectors)('classifies %j as %s', (hostname, expected) => {
    expect(summary(classifyHostname(hostname))).toBe(expected);
  });
});
