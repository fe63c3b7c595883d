/**
 * The customisation list of a starting gateway: its config file (for `uri` and each server's
 * `range`), the plugins it loaded and its upstream registry. A config built in memory has no
 * file; its servers carry the URI `portcullis:config` and no range.
 */
import type { GatewayConfig } from '../config/schema.js';
import type { AgentSet } from '../plugins/agent-set.js';
import type { LoadedPlugins } from '../plugins/plugin-servers.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { readConfigSource, type ConfigSource } from './config-ranges.js';
import { CustomizationList } from './customization-list.js';
import { createIdMinter } from './ids.js';

const IN_MEMORY: ConfigSource = Object.freeze({ uri: 'portcullis:config', ranges: new Map() });

export async function customizationListFor(
  config: Pick<GatewayConfig, 'configFile' | 'servers'>,
  plugins: LoadedPlugins,
  registry: UpstreamRegistry,
  agents?: AgentSet,
): Promise<CustomizationList> {
  const configServers = Object.keys(config.servers);
  const source = config.configFile === undefined ? IN_MEMORY : await readConfigSource(config.configFile, configServers);
  return new CustomizationList({ sources: { config: source, configServers, plugins: plugins.plugins, agents: agents?.agents.filter((a) => a.plugin === undefined) ?? [] }, registry, ids: createIdMinter() });
}
