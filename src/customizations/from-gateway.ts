/**
 * The customisations of a starting gateway: its config file (for `uri` and each server's
 * `range`), the plugins it loaded, its upstream registry and its enablement (decisions read
 * from the state store before any server starts, so a server disabled globally is never
 * started). A config built in memory has no file; its servers carry the URI `portcullis:config`
 * and no range.
 */
import type { GatewayConfig } from '../config/schema.js';
import { isLoopbackAddress } from '../inbound/bind-check.js';
import type { Logger } from '../observability/logger.js';
import type { AgentSet } from '../plugins/agent-set.js';
import type { LoadedPlugins } from '../plugins/plugin-servers.js';
import type { GatewayResources } from '../routing/gateway-resources.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import type { UserTokens } from '../upstream/credentials/user-tokens.js';
import { readConfigSource, type ConfigSource } from './config-ranges.js';
import { CustomizationList } from './customization-list.js';
import { customizationsResource } from './customizations-resource.js';
import type { Enablement } from './enablement/enablement.js';
import { enablementFor } from './enablement/from-config.js';
import { applyGlobalDecisions } from './enablement/global-effects.js';
import type { EnablementStore } from './enablement/store.js';
import { createIdMinter } from './ids.js';
import type { TogglePermissions } from './toggle-check.js';

const IN_MEMORY: ConfigSource = Object.freeze({ uri: 'portcullis:config', ranges: new Map() });

type CustomizationConfig = Pick<GatewayConfig, 'configFile' | 'servers' | 'stateDir' | 'eventStore' | 'auth' | 'policy'>;

export interface GatewayCustomizations {
  readonly list: CustomizationList;
  readonly enablement: Enablement;
  /** `portcullis://customizations`, for the aggregate endpoint. */
  readonly resource: GatewayResources;
  /**
   * A reload added config server `name` (`configServers`: the new config's, in its order): its
   * item joins the list, with the config file's ranges read again (entries moved).
   */
  admitServer(name: string, configServers: readonly string[]): Promise<void>;
  /** Who may set workspace and global decisions, given the address the listener bound. */
  permissions(boundAddress: string): TogglePermissions;
  /** Ends the resource's and the list's watchers (the enablement store closes on its own: `readEnablement`). */
  close(): Promise<void>;
}

/** Reads the stored decisions; call before the registry starts anything. Rejects when the store cannot be read. */
export function readEnablement(config: CustomizationConfig, plugins: LoadedPlugins, logger: Logger): Promise<{ enablement: Enablement; store: EnablementStore }> {
  return enablementFor(config, plugins, logger);
}

/**
 * The list, its resource and the enablement's effects, with every server the global decisions
 * disable already stopped (so `registry.start()` leaves it alone). Subscribed before the first
 * connection attempt, so the list sees every state from `starting` on.
 */
export async function customizationsFor(
  config: CustomizationConfig,
  plugins: LoadedPlugins,
  registry: UpstreamRegistry,
  read: { enablement: Enablement },
  agents?: AgentSet,
  userTokens?: UserTokens,
): Promise<GatewayCustomizations> {
  const { enablement } = read;
  await applyGlobalDecisions(enablement, registry);
  enablement.setGlobalEffect(() => applyGlobalDecisions(enablement, registry));
  const configServers = Object.keys(config.servers);
  const source = config.configFile === undefined ? IN_MEMORY : await readConfigSource(config.configFile, configServers);
  const ownAgents = agents?.agents.filter((a) => a.plugin === undefined) ?? [];
  const list = new CustomizationList({
    sources: { config: source, configServers, plugins: plugins.plugins, agents: ownAgents },
    registry,
    ids: createIdMinter(),
    enablement,
    ...(userTokens === undefined ? {} : { userTokens }),
  });
  const resource = customizationsResource(list);
  const admins = new Set(config.policy.admins);
  return {
    list,
    enablement,
    resource,
    async admitServer(name, servers) {
      list.admitServer(name, config.configFile === undefined ? IN_MEMORY : await readConfigSource(config.configFile, servers));
    },
    permissions: (boundAddress) => ({ admins, openToLocal: config.auth === undefined && isLoopbackAddress(boundAddress) }),
    async close() {
      resource.close();
      list.close();
    },
  };
}
