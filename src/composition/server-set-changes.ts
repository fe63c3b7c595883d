/**
 * What a hot reload does to the set of servers of a running gateway (lifecycle/reload.ts,
 * `ReloadHost.add` / `remove`; docs/operations.md, "Hot reload"), in the order each part must
 * learn of it.
 *
 * Adding: decided first (enablement: a server the global decisions disable is added stopped),
 * then started — its side channel and customisation-list item exist from the start, so its state
 * shows — and listed once its first connection attempt settled (the registry's roster), so the
 * sessions and 2026 listeners that then hear `list_changed` list it from a live connection.
 *
 * Removing: hidden first (sessions hear `list_changed` and no new call reaches it), then its side
 * channel and list item go, then it stops with every child reaped.
 */
import type { ServerConfig } from '../config/schema.js';
import { enablementItem } from '../customizations/enablement/from-config.js';
import type { GatewayCustomizations } from '../customizations/from-gateway.js';
import type { Logger } from '../observability/logger.js';
import { warnAboutMissingEnabledTools } from '../upstream/enabled-tools-check.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { Endpoints } from './endpoints.js';

export interface ServerSetParts {
  registry: UpstreamRegistry;
  endpoints: Endpoints;
  customizations: GatewayCustomizations;
  logger: Logger;
  /** The configured servers of the configuration being applied, in its order (the list's order). */
  configServers: () => readonly string[];
}

export interface ServerSetChanges {
  /** Rejects when the server did not come up; it is added all the same, retrying in state `error`. */
  add(name: string, config: ServerConfig): Promise<void>;
  remove(name: string): Promise<void>;
}

export function serverSetChanges(parts: ServerSetParts): ServerSetChanges {
  const { registry, endpoints, customizations, logger } = parts;
  return {
    async add(name, server) {
      const runs = customizations.enablement.admit(enablementItem(name, server));
      const adding = registry.addServer(name, server, { stopped: !runs });
      endpoints.addServer(name, server); // the registry holds its entry now
      const [started] = await Promise.allSettled([adding, customizations.admitServer(name, parts.configServers())]);
      customizations.enablement.reinstate(name); // a server a reload removed earlier: seen again
      if (started.status === 'rejected') throw started.reason;
      void warnAboutMissingEnabledTools(registry, logger, [name]); // checked as at start
    },
    async remove(name) {
      customizations.enablement.withdraw(name);
      customizations.list.withdrawServer(name);
      await endpoints.removeServer(name);
      await registry.removeServer(name);
    },
  };
}
