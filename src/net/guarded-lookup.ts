/**
 * The egress guard for the gateway's plain TCP connections (its Redis clients), which do not go
 * through undici: the same decision, on the address actually dialled.
 *
 * How: `net.connect` takes a `lookup` hook; this one resolves the name once, decides on every
 * answer (`createAddressPicker`) and hands back only the checked address, so the socket dials
 * exactly what was judged. `net.connect` never calls `lookup` for an IP literal, so a literal is
 * decided here, before any client is built, and a refused one throws — a misconfigured store
 * fails the start instead of retrying forever.
 */
import { isIP, type LookupFunction } from 'node:net';
import { GatewayError } from '../errors.js';
import { createAddressPicker, decideConnect, type EgressDispatcherOptions } from './egress-guard.js';

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Judges the host a TCP client will dial and returns the `lookup` to give it. Throws a
 * `GatewayError` (`UPSTREAM_BLOCKED`, naming `options.server` — the config field — never the host)
 * for a refused literal; a name is judged on each connection, and a refusal fails that connection.
 */
export function guardTcpHost(hostname: string, options: EgressDispatcherOptions): { lookup: LookupFunction } {
  const pick = createAddressPicker(options);
  const host = stripBrackets(hostname);
  if (isIP(host) !== 0) {
    const decision = decideConnect({ hostname: host, allowPrivateNetwork: options.allowPrivateNetwork, allowPublic: options.allowPublic ?? true });
    if (!decision.ok) {
      options.logger?.warn({ server: options.server, code: decision.code, range: decision.range }, 'egress guard refused a connection');
      throw new GatewayError(decision.code, `${options.server}: ${decision.message}`);
    }
  }
  const lookup: LookupFunction = (name, lookupOptions, callback) => {
    pick(name).then(
      ({ address, family }) => {
        if (lookupOptions.all === true) (callback as (e: null, all: { address: string; family: number }[]) => void)(null, [{ address, family }]);
        else callback(null, address, family);
      },
      (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
  return { lookup };
}
