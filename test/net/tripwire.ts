/**
 * A tripwire for egress tests: while installed, any attempt to open a TCP/TLS connection to
 * anything but a loopback IP literal, or to resolve anything but such a literal through `dns`
 * (`listen` looks its host up; a numeric lookup never leaves the machine), throws synchronously
 * *before* the real call runs (so no packet leaves the machine) and is recorded as a violation.
 *
 * It patches `net.Socket.prototype.connect` (which `net.connect`, `tls.connect` and undici's
 * connector all end in), `tls.connect` itself (a TLS dial names its target there first),
 * `dns.lookup` and `dns.promises.lookup`. Names count as violations even when they would resolve
 * to loopback: a lookup may itself send a DNS packet off the machine.
 *
 * Usage: `const wire = installTripwire()` in `beforeEach`, and in `afterEach`
 * `wire.restore(); expect(wire.violations).toEqual([])`.
 */
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';
import { afterEach, beforeEach, expect } from 'vitest';

export interface Tripwire {
  /** One line per refused attempt, e.g. `connect 10.0.0.1:80`. */
  readonly violations: readonly string[];
  restore(): void;
}

export interface TripwireOptions {
  /** Extra loopback addresses to treat as forbidden, so a test can prove the wire trips. */
  forbid?: readonly string[];
}

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/**
 * True for a loopback IP literal: 127.0.0.0/8, ::1, and ::ffff:127.x.y.z (BlockList matches the
 * IPv4-mapped form against the IPv4 subnet). Names are never loopback here.
 */
export function isLoopbackLiteral(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (net.isIPv4(bare)) return LOOPBACK.check(bare, 'ipv4');
  if (net.isIPv6(bare)) return LOOPBACK.check(bare, 'ipv6');
  return false;
}

interface Target {
  host: string | undefined;
  port: unknown;
  path: unknown;
}

/** The host/port/path of `Socket#connect(options | port[, host] | path, …)`. */
function targetOf(args: readonly unknown[]): Target {
  const [first, second] = args;
  if (Array.isArray(first)) return targetOf(first); // Node's internal normalized-args form
  if (first !== null && typeof first === 'object') {
    const o = first as { host?: unknown; port?: unknown; path?: unknown };
    return { host: typeof o.host === 'string' ? o.host : undefined, port: o.port, path: o.path };
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { host: undefined, port: undefined, path: first };
  return { host: typeof second === 'string' ? second : undefined, port: first, path: undefined };
}

export function installTripwire(options: TripwireOptions = {}): Tripwire {
  const violations: string[] = [];
  const forbidden = new Set(options.forbid ?? []);
  const allowed = (host: string): boolean => isLoopbackLiteral(host) && !forbidden.has(host);

  const trip = (what: string): never => {
    violations.push(what);
    throw new Error(`tripwire: refused ${what} (egress tests may only reach loopback IP literals)`);
  };

  const checkConnect = (kind: string, target: Target): void => {
    if (target.path !== undefined && target.path !== null && target.host === undefined) return; // a local socket file
    // An absent host means `localhost` to Node, which is a name.
    const host = target.host ?? 'localhost';
    if (!allowed(host)) trip(`${kind} ${host}:${String(target.port)}`);
  };

  const originalConnect = net.Socket.prototype.connect;
  const originalTlsConnect = tls.connect;
  const originalLookup = dns.lookup;
  const originalPromisesLookup = dns.promises.lookup;

  net.Socket.prototype.connect = function tripwireConnect(this: net.Socket, ...args: unknown[]) {
    checkConnect('connect', targetOf(args));
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof net.Socket.prototype.connect;

  tls.connect = function tripwireTlsConnect(...args: unknown[]) {
    const target = targetOf(args);
    const wrapsSocket = args.some((a) => a !== null && typeof a === 'object' && (a as { socket?: unknown }).socket !== undefined);
    if (!wrapsSocket) checkConnect('tls.connect', target);
    return (originalTlsConnect as (...a: unknown[]) => tls.TLSSocket)(...args);
  } as typeof tls.connect;

  // `server.listen(port, '127.0.0.1')` looks its literal up; a numeric lookup never leaves the host.
  dns.lookup = function tripwireLookup(this: unknown, hostname: string, ...rest: unknown[]) {
    if (!allowed(String(hostname))) trip(`dns.lookup ${String(hostname)}`);
    return (originalLookup as (...a: unknown[]) => unknown).call(this, hostname, ...rest);
  } as typeof dns.lookup;
  dns.promises.lookup = async function tripwirePromisesLookup(this: unknown, hostname: string, ...rest: unknown[]) {
    if (!allowed(String(hostname))) trip(`dns.promises.lookup ${String(hostname)}`);
    return (originalPromisesLookup as (...a: unknown[]) => unknown).call(this, hostname, ...rest);
  } as typeof dns.promises.lookup;

  return {
    violations,
    restore() {
      net.Socket.prototype.connect = originalConnect;
      tls.connect = originalTlsConnect;
      dns.lookup = originalLookup;
      dns.promises.lookup = originalPromisesLookup;
    },
  };
}

/**
 * The usual arrangement for a test file: a tripwire around every test, and after each one its
 * `cleanups` run (last first) before the wire is checked for violations.
 */
export function tripwireEachTest(cleanups: (() => Promise<void> | void)[]): void {
  let wire: Tripwire;
  beforeEach(() => {
    wire = installTripwire();
  });
  afterEach(async () => {
    wire.restore();
    while (cleanups.length > 0) await cleanups.pop()?.();
    expect(wire.violations).toEqual([]);
  });
}
