/**
 * Preload (`node --import <this file>`) that makes every TCP `listen()` in the process bind
 * 127.0.0.1, whatever the program asked for. For a tool with no host option (supergateway 4.0.0
 * calls `app.listen(port)`, which binds every interface): the bench may only ever listen on
 * loopback. Fails closed: a `listen()` form it does not recognise throws instead of binding.
 * The bench also checks the bound addresses from /proc afterwards (`listeningAddresses`).
 */
import net from 'node:net';

const LOOPBACK = '127.0.0.1';

type ListenArgs = unknown[];

function isIpcPath(value: unknown): boolean {
  return typeof value === 'string' && !/^\d+$/.test(value);
}

/** Rewrites `listen()` arguments to an options object with host 127.0.0.1 (IPC paths pass). */
export function loopbackListenArgs(args: ListenArgs): ListenArgs {
  const last = args[args.length - 1];
  const callback = typeof last === 'function' ? [last] : [];
  const first = args[0];
  if (first === undefined || first === null || typeof first === 'function') return [{ port: 0, host: LOOPBACK }, ...callback];
  if (typeof first === 'number' || (typeof first === 'string' && !isIpcPath(first))) {
    return [{ port: Number(first), host: LOOPBACK }, ...callback];
  }
  if (isIpcPath(first)) return args;
  if (typeof first === 'object' && !Array.isArray(first)) {
    const options = first as Record<string, unknown>;
    if ('handle' in options || '_handle' in options || 'fd' in options) {
      throw new Error('loopback-listen: refusing to listen on a handle or descriptor');
    }
    if (typeof options.path === 'string') return args;
    return [{ ...options, host: LOOPBACK, ipv6Only: false }, ...callback];
  }
  throw new Error('loopback-listen: refusing an unrecognised listen() call');
}

const original = net.Server.prototype.listen;
net.Server.prototype.listen = function loopbackOnlyListen(this: net.Server, ...args: ListenArgs) {
  return (original as (...a: ListenArgs) => net.Server).apply(this, loopbackListenArgs(args));
} as typeof net.Server.prototype.listen;
