/**
 * The rules a parsed config must pass before the gateway runs it, in one place for `portcullis
 * check`, the start and a reload, so `check` never passes what the start refuses:
 *
 * - its environment (config/environment.ts): every variable a server entry reads is set, and a
 *   `url` written with `${env:NAME}` is filled in and judged by the egress policy;
 * - the bind rule on a literal `listen.host` (the start checks the address actually bound again);
 * - warnings for what would start but misbehave: a `/sse` URL given as Streamable HTTP (the
 *   endpoint of the HTTP+SSE transport: a Streamable HTTP client's POST there answers 404 or 405).
 *
 * Pure: it reads the environment it is handed, and nothing else. What needs the network (the DNS
 * names of upstreams, `check --resolve`) is the CLI's to add.
 */
import { isIP } from 'node:net';
import { resolveEnvironment, type Environment } from '../config/environment.js';
import type { GatewayConfig } from '../config/schema.js';
import { refuseBind } from './gateway-policy.js';

export interface Preflight {
  /** The config to run: every `url` reference filled in. */
  readonly config: Readonly<GatewayConfig>;
  /** Each stops the gateway (and fails `check`). */
  readonly problems: readonly string[];
  /** Each is logged at start and printed by `check`. */
  readonly warnings: readonly string[];
  /** The bind rule's own refusal (`BIND_REFUSED`), also among `problems`: the start throws it as is when it is the only one. */
  readonly bindRefused?: Error;
}

/** A path whose last segment is `sse`: where HTTP+SSE servers (MCP 2024-11-05) take their stream. */
function looksLikeSseEndpoint(url: string): boolean {
  try {
    return /\/sse\/?$/i.test(new URL(url).pathname);
  } catch {
    return false;
  }
}

export function preflight(parsed: Readonly<GatewayConfig>, env: Environment): Preflight {
  const { config, problems } = resolveEnvironment(parsed, env);
  const warnings: string[] = [];
  const refused = isIP(config.listen.host) !== 0 ? refuseBind(config.listen.host, config) : undefined;
  if (refused !== undefined) problems.push(`listen.host: ${refused.message}`);
  for (const [name, server] of Object.entries(config.servers)) {
    if (server.transport === 'streamableHttp' && looksLikeSseEndpoint(server.url)) {
      warnings.push(
        `servers.${name}.url: ends in /sse, where HTTP+SSE servers (MCP 2024-11-05) serve their stream, but the transport is "streamableHttp"; ` +
          'if the server speaks HTTP+SSE, set "transport": "sse" (or "type": "sse")',
      );
    }
  }
  return { config, problems, warnings, ...(refused === undefined ? {} : { bindRefused: refused }) };
}
