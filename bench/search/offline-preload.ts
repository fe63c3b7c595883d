/**
 * Preload for the MCP servers `record-real-tools.ts` runs (`node --import <this file> <server>`):
 * only their `tools/list` is wanted, so any TCP/TLS connection to anything but a loopback IP
 * literal, and any DNS lookup of a name, throws before the real call runs. A server that phones
 * home at start-up (telemetry, update checks) then fails that call instead of sending a packet
 * off the machine. `NODE_OPTIONS` carries the preload into the server's own Node children.
 */
import dns from 'node:dns';
import net from 'node:net';
import tls from 'node:tls';

const LOOPBACK = new net.BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function loopbackLiteral(host: unknown): boolean {
  if (typeof host !== 'string') return false;
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return (net.isIPv4(bare) && LOOPBACK.check(bare, 'ipv4')) || (net.isIPv6(bare) && LOOPBACK.check(bare, 'ipv6'));
}

function refuse(what: string): never {
  throw new Error(`offline: refused ${what} (only loopback is reachable while tools are recorded)`);
}

/** The host of `connect(options | port[, host] | path)`, or `null` for a local socket path. */
function hostOf(args: unknown[]): string | null {
  const [first, second] = args;
  if (Array.isArray(first)) return hostOf(first);
  if (first !== null && typeof first === 'object') {
    const o = first as { host?: unknown; path?: unknown };
    if (typeof o.path === 'string' && o.host === undefined) return null;
    return typeof o.host === 'string' ? o.host : 'localhost';
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return null;
  return typeof second === 'string' ? second : 'localhost';
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function offlineConnect(this: net.Socket, ...args: unknown[]) {
  const host = hostOf(args);
  if (host !== null && !loopbackLiteral(host)) refuse(`connect ${host}`);
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

const tlsConnect = tls.connect;
tls.connect = function offlineTlsConnect(...args: unknown[]) {
  const host = hostOf(args);
  if (host !== null && !loopbackLiteral(host)) refuse(`tls.connect ${host}`);
  return (tlsConnect as (...a: unknown[]) => tls.TLSSocket)(...args);
} as typeof tls.connect;

const lookup = dns.lookup;
dns.lookup = function offlineLookup(this: unknown, hostname: string, ...rest: unknown[]) {
  if (!loopbackLiteral(hostname)) refuse(`dns.lookup ${String(hostname)}`);
  return (lookup as (...a: unknown[]) => unknown).call(this, hostname, ...rest);
} as typeof dns.lookup;
const promisesLookup = dns.promises.lookup;
dns.promises.lookup = async function offlinePromisesLookup(this: unknown, hostname: string, ...rest: unknown[]) {
  if (!loopbackLiteral(hostname)) refuse(`dns.promises.lookup ${String(hostname)}`);
  return (promisesLookup as (...a: unknown[]) => unknown).call(this, hostname, ...rest);
} as typeof dns.promises.lookup;
for (const name of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveSrv', 'resolveTxt'] as const) {
  (dns as unknown as Record<string, unknown>)[name] = () => refuse(`dns.${name}`);
  (dns.promises as unknown as Record<string, unknown>)[name] = async () => refuse(`dns.promises.${name}`);
}
