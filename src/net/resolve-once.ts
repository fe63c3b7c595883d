/**
 * Name resolution for the egress guard: one lookup per connection, bounded in time, whose answers
 * are all handed to the decision (src/net/connect-decision.ts) and one of which is then dialled.
 *
 * Errors never carry the hostname: Node's `getaddrinfo ENOTFOUND docs.internal` names it, and a
 * hostname can be the secret part of an upstream URL. Only the error code survives.
 */
import { promises as dnsPromises } from 'node:dns';
import { UpstreamError } from '../errors.js';
import type { Resolve, ResolvedAddress } from './connect-decision.js';

/**
 * `dns.lookup(host, { all: true, verbatim: true })`: the system resolver (so /etc/hosts and
 * nsswitch apply, as for any other program on the host), every address, in the resolver's order.
 * `dnsPromises.lookup` is read at call time so a test tripwire can intercept it.
 */
export const systemResolve: Resolve = async (hostname) => {
  const answers = await dnsPromises.lookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }): ResolvedAddress => ({ address, family: family === 6 ? 6 : 4 }));
};

const ERROR_CODE = /^[A-Z][A-Z0-9_]{0,40}$/;

/** `EAI_AGAIN`, `ENOTFOUND`…: safe to show; anything else is dropped. */
function safeCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && ERROR_CODE.test(code) ? code : undefined;
}

/**
 * Resolve `hostname` once with `resolve`, failing with `UPSTREAM_TIMEOUT` after `timeoutMs` (the
 * server's connect timeout: resolution is part of connecting) and with `UPSTREAM_UNAVAILABLE` when
 * the resolver fails. Neither error names the host.
 */
export async function resolveWithin(
  resolve: Resolve,
  hostname: string,
  timeoutMs: number,
  server: string,
): Promise<readonly ResolvedAddress[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UpstreamError('UPSTREAM_TIMEOUT', server, `name resolution timed out after ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    const answers = await Promise.race([
      // Through `then` so a resolver that throws synchronously is caught like one that rejects.
      Promise.resolve(hostname).then(resolve).catch((error: unknown) => {
        const code = safeCode(error);
        throw new UpstreamError('UPSTREAM_UNAVAILABLE', server, `name resolution failed${code === undefined ? '' : ` (${code})`}`);
      }),
      timeout,
    ]);
    return Array.isArray(answers) ? answers : [];
  } finally {
    clearTimeout(timer);
  }
}
