/**
 * The egress guard's decision, as a pure function: given the host an upstream connection is about
 * to dial (and, for a DNS name, every address the name resolved to), may it connect, and to which
 * address?
 *
 * Why: an upstream URL is an SSRF lever (cloud metadata at 169.254.169.254, admin ports on
 * 127.0.0.1, the office LAN), and DNS is attacker-controlled input. So the decision is made on the
 * addresses actually dialled, never on the URL text alone (DESIGN.md §7): literals are classified
 * before connecting (a `lookup` hook never sees them, PITFALLS.md "Networking"); a name is resolved
 * once, every answer is classified (one private answer among public ones refuses the lot, or an
 * attacker could win the race between answers), and the connection is pinned to a checked address
 * so a second resolution (DNS rebinding) cannot swap it.
 *
 * Messages name the address class only, never the hostname, the address or the URL.
 */
import { isIP } from 'node:net';
import { classifyAddress, classifyHostname } from './address-class.js';

/** One answer of a name resolution (the shape of `dns.lookup(…, { all: true })`). */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a DNS name to every address it has. Injected in tests; `dns.lookup` by default. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export interface ConnectRefusal {
  ok: false;
  code: 'UPSTREAM_BLOCKED';
  /** The address class refused (`loopback`, `linkLocal`, `ipv4Mapped(private)`, `localhostName`…). */
  range: string;
  /** Safe to show: names the class only. */
  message: string;
}

export type ConnectDecision =
  /** Connect to exactly this address. */
  | { ok: true; action: 'dial'; address: string; family: 4 | 6 }
  /** The host is a DNS name: resolve it once and decide again with every answer. */
  | { ok: true; action: 'resolve' }
  | ConnectRefusal;

export interface ConnectQuery {
  /** The host to dial, as the URL gave it: IPv6 with or without brackets, or a DNS name. */
  hostname: string;
  /** The server's `allowPrivateNetwork`: every address class is dialable when true. */
  allowPrivateNetwork: boolean;
  /**
   * False for a plaintext connection that may only stay on the private network (a Redis or a
   * replica reached over `redis:`/`http:`): a public address is refused then. Default true.
   */
  allowPublic?: boolean;
  /** Every address the name resolved to; ignored for literals. */
  addresses?: readonly ResolvedAddress[];
}

/** Classes refused whatever `allowPrivateNetwork` says: they are not networks, they are garbage. */
const ALWAYS_REFUSED = new Set(['unparseable', 'noAddress']);

/** Ends a refusal's message exactly when setting `allowPrivateNetwork` would have allowed it. */
export const PRIVATE_NETWORK_OFF = '(allowPrivateNetwork is false)';

function refuse(range: string, allowPrivateNetwork: boolean): ConnectRefusal {
  if (range === 'public') {
    return { ok: false, code: 'UPSTREAM_BLOCKED', range, message: 'plaintext connection to a public address refused (it may only reach the private network)' };
  }
  const what =
    range === 'localhostName'
      ? 'a localhost name'
      : range === 'noAddress'
        ? 'a name without addresses'
        : `${/^[aeiou]/i.test(range) ? 'an' : 'a'} ${range} address`;
  const why = ALWAYS_REFUSED.has(range) || allowPrivateNetwork ? '' : ` ${PRIVATE_NETWORK_OFF}`;
  return { ok: false, code: 'UPSTREAM_BLOCKED', range, message: `connection to ${what} refused${why}` };
}

function permits(range: string, allowPrivateNetwork: boolean): boolean {
  return allowPrivateNetwork && !ALWAYS_REFUSED.has(range);
}

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** The family Node will dial `address` with, from the text itself (a resolver's claim is not trusted). */
function familyOf(address: string): 4 | 6 | 0 {
  const zone = address.indexOf('%');
  const bare = zone === -1 ? address : address.slice(0, zone);
  const family = isIP(bare);
  return family === 4 || family === 6 ? family : 0;
}

/**
 * Decide one connection attempt. Call it with the hostname first: a literal gets `dial` or a
 * refusal straight away, a name gets `resolve` (or a refusal: `localhost` and `*.localhost` are
 * loopback by RFC 6761 whatever DNS says). Then call it again with the resolved `addresses`: any
 * refused answer refuses the connection, otherwise the first answer is the one to dial.
 */
export function decideConnect(query: ConnectQuery): ConnectDecision {
  const { allowPrivateNetwork } = query;
  const allowPublic = query.allowPublic !== false;
  const host = stripBrackets(query.hostname);
  const literalFamily = familyOf(host);

  if (literalFamily !== 0) {
    const verdict = classifyAddress(host);
    if (verdict.kind === 'blocked' && !permits(verdict.range, allowPrivateNetwork)) {
      return refuse(verdict.range, allowPrivateNetwork);
    }
    if (verdict.kind === 'public' && !allowPublic) return refuse('public', allowPrivateNetwork);
    return { ok: true, action: 'dial', address: host, family: literalFamily };
  }

  const name = classifyHostname(host);
  if (name.kind === 'blocked' && !permits(name.range, allowPrivateNetwork)) {
    return refuse(name.range, allowPrivateNetwork);
  }
  // A hostname that classifies as an address without being an isIP literal (`127.1`) is never
  // produced by WHATWG URL; it was refused above as `unparseable`. What remains is a name.
  if (query.addresses === undefined) return { ok: true, action: 'resolve' };
  return decideAddresses(query.addresses, allowPrivateNetwork, allowPublic);
}

function decideAddresses(addresses: readonly ResolvedAddress[], allowPrivateNetwork: boolean, allowPublic: boolean): ConnectDecision {
  let chosen: { address: string; family: 4 | 6 } | undefined;
  for (const answer of addresses) {
    const address = typeof answer?.address === 'string' ? answer.address : '';
    const family = familyOf(address);
    const verdict = family === 0 ? ({ kind: 'blocked', range: 'unparseable' } as const) : classifyAddress(address);
    if (verdict.kind === 'blocked' && !permits(verdict.range, allowPrivateNetwork)) {
      return refuse(verdict.range, allowPrivateNetwork);
    }
    if (verdict.kind === 'public' && !allowPublic) return refuse('public', allowPrivateNetwork);
    if (chosen === undefined && family !== 0) chosen = { address, family };
  }
  if (chosen === undefined) return refuse('noAddress', allowPrivateNetwork);
  return { ok: true, action: 'dial', ...chosen };
}
