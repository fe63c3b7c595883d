/**
 * What `portcullis check` can tell before a run about the HTTP upstreams the egress guard will
 * refuse: one whose URL is an IP literal or a localhost name in a loopback or private range, and,
 * when a resolver is given, one whose DNS name resolves there. The same decision the guard makes
 * when it dials (`decideConnect`), so a warning here is a refusal at run time.
 */
import type { GatewayConfig } from '../config/schema.js';
import { blockedAdvice } from './blocked-advice.js';
import { decideConnect, type ConnectRefusal, type Resolve } from './connect-decision.js';
import { resolveWithin } from './resolve-once.js';

export interface ReachabilityOptions {
  /** Looks DNS names up too (the CLI's `--resolve`); without it only literals and localhost names are judged. */
  resolve?: Resolve;
  /** Bound on each lookup (default: the server's connect timeout). */
  timeoutMs?: number;
}

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined; // the schema refused it already
  }
}

function warning(server: string, refusal: ConnectRefusal): string {
  return `servers.${server}.url: will be ${blockedAdvice(server, refusal.message)}`;
}

/** One warning per HTTP upstream the egress guard will refuse (never naming its URL or host). */
export async function blockedUpstreamWarnings(config: Readonly<GatewayConfig>, options: ReachabilityOptions = {}): Promise<string[]> {
  const checks = Object.entries(config.servers).map(async ([server, entry]): Promise<string | undefined> => {
    if (entry.transport === 'stdio' || entry.allowPrivateNetwork) return undefined;
    const hostname = hostnameOf(entry.url);
    if (hostname === undefined) return undefined;
    const first = decideConnect({ hostname, allowPrivateNetwork: false });
    if (!first.ok) return warning(server, first);
    if (first.action === 'dial' || options.resolve === undefined) return undefined;
    try {
      const addresses = await resolveWithin(options.resolve, hostname, options.timeoutMs ?? entry.connectTimeoutMs, server);
      const second = decideConnect({ hostname, allowPrivateNetwork: false, addresses });
      return second.ok ? undefined : warning(server, second);
    } catch (error) {
      return `servers.${server}.url: ${(error as Error).message.replace(/^upstream "[^"]*": /, '')}`;
    }
  });
  return (await Promise.all(checks)).filter((w): w is string => w !== undefined);
}
