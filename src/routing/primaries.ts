/**
 * What an endpoint learns from its servers' primary connections (the registry's eager link per
 * server), so that `inbound/` asks routing rather than reaching into the upstream registry.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/server';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { PER_PRINCIPAL_CAPABILITIES } from '../upstream/credentials/principal-bound.js';

export interface PrimaryInfo {
  readonly server: string;
  /** Undefined while that server's primary is down. */
  readonly capabilities: ServerCapabilities | undefined;
  readonly instructions: string | undefined;
}

export type ListName = 'tools' | 'prompts' | 'resources';

/**
 * The instructions a client is shown for `server` given the upstream's own: tool integrity serves
 * the pinned text while a change of them waits for an admin (integrity/tool-integrity.ts).
 */
export type ServedInstructions = (server: string, current: string | undefined) => string | undefined;

/**
 * Capabilities and instructions of `servers`, in that order, from the primaries that are up now;
 * each up server's instructions as `served` says (absent: the upstream's own).
 */
export function primaryInfo(registry: UpstreamRegistry, servers: readonly string[], served?: ServedInstructions): PrimaryInfo[] {
  return servers.map((server) => {
    const entry = registry.entry(server);
    const link = entry.primary.current;
    // A server reached per principal has no primary (principal-bound.ts): its declared lists.
    const capabilities = link?.capabilities ?? (entry.reach === 'perPrincipal' ? PER_PRINCIPAL_CAPABILITIES : undefined);
    const instructions = link === undefined || served === undefined ? link?.instructions : served(server, link.instructions);
    return { server, capabilities, instructions };
  });
}

/**
 * Every server's tool names from its primary connection (its cached list, fetched once when none
 * is cached), for checks that compare one server's tools with the others' (tool integrity); a
 * server that is down or has no primary (reached per principal) is left out.
 */
export async function primaryToolNames(registry: UpstreamRegistry): Promise<Map<string, string[]>> {
  const entries = [...registry.entries.values()];
  const settled = await Promise.all(
    entries.map(async (entry) => {
      const link = entry.primary.current;
      if (link === undefined) return undefined;
      try {
        const { items } = await link.hintedList('tools');
        return [entry.name, items.map((item) => (item as { name?: unknown }).name).filter((name): name is string => typeof name === 'string')] as const;
      } catch {
        return undefined;
      }
    }),
  );
  return new Map(settled.filter((pair) => pair !== undefined));
}
