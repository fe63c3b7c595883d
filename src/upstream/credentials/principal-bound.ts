/**
 * Servers whose every connection must belong to one principal because what authenticates it is
 * that principal's own (`upstreamAuth.kind: "tokenExchange"`). Such a server has no primary
 * connection — the gateway has no credential of its own to open one with — so it is not started
 * at boot, not waited for by readiness, and lists for a caller come from that caller's own
 * principal connection, opened on first list (docs/authorization.md, "Per-principal tokens").
 */
import type { ServerCapabilities } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../../config/schema.js';
import { UpstreamError } from '../../errors.js';

export function reachedPerPrincipal(config: ServerConfig): boolean {
  return config.transport !== 'stdio' && config.upstreamAuth?.kind === 'tokenExchange';
}

/** What asking such a server's primary answers: it has none, and why. */
export function noPrimaryConnection(server: string): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_UNAVAILABLE',
    server,
    "has no connection of the gateway's own: it is reached with each principal's exchanged token (upstreamAuth tokenExchange), on that principal's connection",
  );
}

/**
 * What the gateway declares for such a server at `initialize`, with no connection of its own to
 * learn it from: every list it may have (what a principal's connection actually offers is what
 * that principal's lists then hold; an absent kind lists empty).
 */
export const PER_PRINCIPAL_CAPABILITIES: Readonly<ServerCapabilities> = Object.freeze({ tools: {}, prompts: {}, resources: {} });
