/**
 * `enabledTools` naming a tool the upstream does not list is almost always a typo or a renamed
 * tool; the filter then silently hides it. Once a server's tool list is known, this says so.
 */
import type { Logger } from '../observability/logger.js';
import type { UpstreamRegistry } from './registry.js';

/** Most names quoted in one warning, and most characters of each. */
const MAX_NAMES = 20;
const MAX_NAME_CHARS = 100;

/** The names in `enabled` that no tool in `listed` (a `tools/list` result's tools) has. Pure. */
export function missingEnabledTools(enabled: readonly string[], listed: readonly unknown[]): string[] {
  const names = new Set<string>();
  for (const tool of listed) {
    const name = (tool as { name?: unknown } | null)?.name;
    if (typeof name === 'string') names.add(name);
  }
  return enabled.filter((name) => !names.has(name));
}

/**
 * For every server with `enabledTools` whose primary connection is up (of `only`, when given: the
 * servers a reload added), fetches its tool list (the connection's cache keeps it for the
 * catalogue) and logs one warning naming the missing tools. Never throws: a list that cannot be
 * fetched is the catalogue's problem, reported there.
 */
export async function warnAboutMissingEnabledTools(registry: UpstreamRegistry, logger: Logger, only?: readonly string[]): Promise<void> {
  const entries = [...registry.entries.values()].filter((entry) => only === undefined || only.includes(entry.name));
  await Promise.all(
    entries.map(async (entry) => {
      if (entry.config.enabledTools.length === 0 || entry.primary.state !== 'ready') return;
      try {
        const link = await entry.primary.get();
        const missing = missingEnabledTools(entry.config.enabledTools, await link.list('tools'));
        if (missing.length === 0) return;
        logger.warn(
          {
            server: entry.name,
            missing: missing.slice(0, MAX_NAMES).map((name) => (name.length > MAX_NAME_CHARS ? `${name.slice(0, MAX_NAME_CHARS)}…` : name)),
            ...(missing.length > MAX_NAMES ? { more: missing.length - MAX_NAMES } : {}),
          },
          `servers.${entry.name}.enabledTools names ${missing.length} tool(s) the upstream does not list; check their spelling`,
        );
      } catch {
        // reported by whoever lists the catalogue next
      }
    }),
  );
}
