/**
 * Communication security of the OAuth resource (MCP 2025-11-25 Authorization, "Communication
 * Security", after OAuth 2.1 §1.5): access tokens are bearer credentials, so an endpoint that takes
 * them from other machines must be reached over TLS. The gateway leaves TLS to the proxy in front
 * of it, whose origin is `listen.publicUrl`; what it can check is that the resource it names is an
 * `https:` one, or one only this machine reaches:
 * - `publicUrl` set: `https:`, or `http:` to a loopback host (a laptop, a test);
 * - no `publicUrl`: the resource is the address bound, so that address must be loopback.
 * Pure: `address` is the bound (or configured literal) address, nothing is resolved.
 */
import { isLoopbackAddress } from '../../bind-check.js';

export type TransportCheck = { ok: true } | { ok: false; message: string };

const OK: TransportCheck = Object.freeze({ ok: true });

function loopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || isLoopbackAddress(hostname);
}

export function checkResourceTransport(input: { address: string; publicUrl: string | undefined }): TransportCheck {
  const { publicUrl } = input;
  if (publicUrl !== undefined) {
    const url = new URL(publicUrl);
    if (url.protocol === 'https:' || loopbackHost(url.hostname)) return OK;
    return {
      ok: false,
      message:
        'auth.kind "oauth": listen.publicUrl is http: to a host other machines reach, so access tokens would cross the network in the clear; ' +
        'set it to the https: origin of the TLS-terminating proxy in front of the gateway',
    };
  }
  if (isLoopbackAddress(input.address)) return OK;
  return {
    ok: false,
    message:
      `auth.kind "oauth": serving on ${input.address} without listen.publicUrl would name plain-http resources other machines reach; ` +
      'put a TLS-terminating proxy in front and set listen.publicUrl to its https: origin',
  };
}
