/**
 * Address classification for the egress guard: is this IP (or this URL hostname) one an upstream
 * connection may dial, or does it reach something on the gateway's own side of the network?
 *
 * Why: an upstream URL is the classic SSRF lever (cloud metadata at 169.254.169.254, admin ports on
 * 127.0.0.1, the office LAN). Attackers dress those targets up — `http://2852039166/`,
 * `[::ffff:7f00:1]`, `[64:ff9b::a9fe:a9fe]`, `[2002:a9fe:a9fe::]` — so every IPv6 form that embeds
 * an IPv4 address is judged by the address it embeds (docs/decisions.md, "Egress is decided on the
 * address dialled").
 *
 * Pure string classification: nothing here resolves or connects. Anything that cannot be parsed
 * is blocked (fail closed). The range tables are our own, ordered (first match wins) and checked
 * with ipaddr.js; ipaddr.js's own `range()` is not used because it calls the IPv4-compatible
 * block `::/96` plain `unicast`.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** A literal address: dialable (`public`) or refused, with `range` naming the class refused. */
export type AddressClass = { kind: 'public' } | { kind: 'blocked'; range: string };

/** A URL hostname: as an address, or a DNS name whose every resolved address must be classified. */
export type HostnameClass = AddressClass | { kind: 'name' };

type Cidr<T> = [T, number];

/** How an IPv6 range that embeds an IPv4 address finds it. */
type Embedded = (parts: readonly number[]) => ipaddr.IPv4;

interface V6Rule {
  range: string;
  cidrs: readonly Cidr<ipaddr.IPv6>[];
  /** Classify by the embedded IPv4 address instead of blocking outright. */
  embedded?: Embedded;
}

const PUBLIC: AddressClass = Object.freeze({ kind: 'public' });

function blocked(range: string): AddressClass {
  return { kind: 'blocked', range };
}

function v4(cidr: string): Cidr<ipaddr.IPv4> {
  return ipaddr.IPv4.parseCIDR(cidr);
}

function v6(cidr: string): Cidr<ipaddr.IPv6> {
  return ipaddr.IPv6.parseCIDR(cidr);
}

function v4FromWords(high: number | undefined, low: number | undefined): ipaddr.IPv4 {
  const h = high ?? 0;
  const l = low ?? 0;
  return new ipaddr.IPv4([h >> 8, h & 0xff, l >> 8, l & 0xff]);
}

/** The last 32 bits (IPv4-mapped, IPv4-compatible, NAT64 well-known prefix). */
const lastThirtyTwoBits: Embedded = (parts) => v4FromWords(parts[6], parts[7]);
/** Bits 16–47 (6to4, RFC 3056). */
const sixToFourBits: Embedded = (parts) => v4FromWords(parts[1], parts[2]);

/** IPv4 ranges that are not globally reachable (IANA special-purpose registry), first match wins. */
const V4_RULES: readonly (readonly [string, readonly Cidr<ipaddr.IPv4>[]])[] = [
  // 0.0.0.0 reaches listeners on 127.0.0.1 on Linux; the whole "this network" block goes.
  ['unspecified', [v4('0.0.0.0/8')]],
  ['loopback', [v4('127.0.0.0/8')]],
  ['private', [v4('10.0.0.0/8'), v4('172.16.0.0/12'), v4('192.168.0.0/16')]],
  ['linkLocal', [v4('169.254.0.0/16')]],
  ['carrierGradeNat', [v4('100.64.0.0/10')]],
  ['multicast', [v4('224.0.0.0/4')]],
  // Before `reserved`: 240.0.0.0/4 contains it.
  ['broadcast', [v4('255.255.255.255/32')]],
  ['benchmarking', [v4('198.18.0.0/15')]],
  ['documentation', [v4('192.0.2.0/24'), v4('198.51.100.0/24'), v4('203.0.113.0/24')]],
  // IETF protocol assignments, the deprecated 6to4 relay anycast block, and class E.
  ['reserved', [v4('192.0.0.0/24'), v4('192.88.99.0/24'), v4('240.0.0.0/4')]],
];

/** IPv6 ranges, first match wins; whatever falls outside 2000::/3 afterwards is `reserved`. */
const V6_RULES: readonly V6Rule[] = [
  { range: 'unspecified', cidrs: [v6('::/128')] },
  { range: 'loopback', cidrs: [v6('::1/128')] },
  { range: 'ipv4Mapped', cidrs: [v6('::ffff:0:0/96')], embedded: lastThirtyTwoBits },
  // After :: and ::1, which sit inside it.
  { range: 'ipv4Compatible', cidrs: [v6('::/96')], embedded: lastThirtyTwoBits },
  { range: 'nat64', cidrs: [v6('64:ff9b::/96')], embedded: lastThirtyTwoBits },
  // RFC 8215 local-use NAT64: the translator and its mapping are site-defined; never trust it.
  { range: 'nat64LocalUse', cidrs: [v6('64:ff9b:1::/48')] },
  { range: 'discard', cidrs: [v6('100::/64')] },
  // Teredo embeds server and (obfuscated) client addresses that say nothing about the path taken.
  { range: 'teredo', cidrs: [v6('2001::/32')] },
  { range: 'benchmarking', cidrs: [v6('2001:2::/48')] },
  // The rest of the IETF protocol-assignment block (ORCHID, drone tags, AMT, AS112…).
  { range: 'reserved', cidrs: [v6('2001::/23')] },
  { range: 'documentation', cidrs: [v6('2001:db8::/32'), v6('3fff::/20')] },
  { range: '6to4', cidrs: [v6('2002::/16')], embedded: sixToFourBits },
  { range: 'uniqueLocal', cidrs: [v6('fc00::/7')] },
  { range: 'linkLocal', cidrs: [v6('fe80::/10')] },
  { range: 'siteLocal', cidrs: [v6('fec0::/10')] },
  { range: 'multicast', cidrs: [v6('ff00::/8')] },
];

const GLOBAL_UNICAST = v6('2000::/3');

function classifyV4(address: ipaddr.IPv4): AddressClass {
  for (const [range, cidrs] of V4_RULES) {
    if (cidrs.some((cidr) => address.match(cidr))) return blocked(range);
  }
  return PUBLIC;
}

function classifyV6(address: ipaddr.IPv6): AddressClass {
  for (const rule of V6_RULES) {
    if (!rule.cidrs.some((cidr) => address.match(cidr))) continue;
    if (rule.embedded === undefined) return blocked(rule.range);
    const inner = classifyV4(rule.embedded(address.parts));
    return inner.kind === 'public' ? PUBLIC : blocked(`${rule.range}(${inner.range})`);
  }
  return address.match(GLOBAL_UNICAST) ? PUBLIC : blocked('reserved');
}

const DOTTED_TAIL = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/;

/**
 * Rewrite a dotted IPv4 tail as two hex words: ipaddr.js parses `::a.b.c.d` as if it were
 * `::ffff:a.b.c.d`, but it is the IPv4-compatible `::xxxx:yyyy`, and that is what Node dials.
 * Only called after `net.isIP` accepted the text, so the octets are valid.
 */
function withHexTail(text: string): string {
  const match = DOTTED_TAIL.exec(text);
  if (match === null) return text;
  const [a = 0, b = 0, c = 0, d = 0] = match.slice(2).map(Number);
  return `${match[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/**
 * Classify one IP address literal, e.g. a resolved address or a URL's literal host.
 *
 * Accepts `[…]` brackets and a `%zone` suffix on IPv6. Only forms that Node itself dials as
 * literals (`net.isIP`) are accepted, so IPv4 must be strict dotted decimal: `127.1`, `0x7f.1` or
 * `010.0.0.1` would be handed to the resolver, not dialled, and are `unparseable` here (blocked).
 */
export function classifyAddress(ip: string): AddressClass {
  let text = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const zone = text.indexOf('%');
  if (zone !== -1 && text.includes(':')) text = text.slice(0, zone);
  try {
    switch (isIP(text)) {
      case 4:
        return classifyV4(ipaddr.IPv4.parse(text));
      case 6:
        return classifyV6(ipaddr.IPv6.parse(withHexTail(text)));
      default:
        return blocked('unparseable');
    }
  } catch {
    return blocked('unparseable');
  }
}

const NAME_LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;
/** WHATWG "ends in a number": such a host is an IPv4 address, never a DNS name. */
const NUMERIC_LABEL = /^(?:\d+|0x[0-9a-f]*)$/;

/**
 * Classify a URL hostname as WHATWG URL normalised it (`new URL(u).hostname`): bracketed IPv6 and
 * dotted IPv4 are classified as addresses; `localhost` and `*.localhost` (RFC 6761: always
 * loopback, whatever DNS says) are blocked as `localhostName`; any other well-formed name is
 * `{ kind: 'name' }`, which the egress guard must resolve and classify address by address.
 * A hostname that WHATWG would not have produced is blocked as `unparseable` (fail closed).
 */
export function classifyHostname(hostname: string): HostnameClass {
  const host = hostname.toLowerCase();
  if (host.startsWith('[')) {
    return host.endsWith(']') ? classifyAddress(host) : blocked('unparseable');
  }
  if (host.includes(':')) return classifyAddress(host);
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  const labels = name.split('.');
  if (name === '' || !labels.every((label) => NAME_LABEL.test(label))) return blocked('unparseable');
  if (labels[labels.length - 1] === 'localhost') return blocked('localhostName');
  if (NUMERIC_LABEL.test(labels[labels.length - 1] ?? '')) return classifyAddress(name);
  return { kind: 'name' };
}
