/**
 * The customisation list, built from what the gateway serves: its configured servers (top-level
 * `mcpServer` items whose `uri` is the config file and `range` their entry) and its plugins
 * (`plugin` items whose children are their servers and agents) and the gateway's own agents
 * directory (top-level `agent` items: they belong to no plugin). Pure: the live parts (state,
 * icons, side-channel URLs) come through a {@link LiveView}, ids through an {@link IdMinter}.
 *
 * Order is deterministic: configured servers in config order, then the gateway's agents by file name, then plugins in the order they
 * were read; inside a plugin its servers in declaration order, then its agents by file name.
 */
import type { ServedAgent } from '../plugins/agent-set.js';
import type { LoadedPlugin, PluginServer } from '../plugins/plugin-servers.js';
import type { AgentDeclaration } from '../plugins/types.js';
import type { ConfigSource } from './config-ranges.js';
import type { IdMinter } from './ids.js';
import { notRunState } from './server-state.js';
import type {
  AgentCustomization,
  Customization,
  CustomizationEnablement,
  Icon,
  McpAppInfo,
  McpServerCustomization,
  McpServerState,
  PluginCustomization,
} from './types.js';

const CONFIG_SERVER_KEY = 'config#mcp=';

/** Durable key of a configured server: stored decisions live here (never on the wire). */
export function configServerKey(name: string): string {
  return `${CONFIG_SERVER_KEY}${name}`;
}

/** The configured server a durable key names; undefined for any other key (a plugin's, …). */
export function configServerOfKey(key: string): string | undefined {
  return key.startsWith(CONFIG_SERVER_KEY) ? key.slice(CONFIG_SERVER_KEY.length) : undefined;
}

export interface ListSources {
  readonly config: ConfigSource;
  /** Configured server names, in config order. */
  readonly configServers: readonly string[];
  readonly plugins: readonly LoadedPlugin[];
  /** Agents of the gateway's own agents directory (top-level `agent` items, after the servers). */
  readonly agents?: readonly ServedAgent[];
}

/** What only the running gateway knows about a server it runs. */
export interface LiveView {
  stateOf(server: string): McpServerState;
  iconsOf(server: string): readonly Icon[] | undefined;
  /** The absolute URL of the server's side channel. */
  channelOf(server: string): string;
  /** The item's enablement entries for the asking viewer, sorted session, workspace, global; empty: none. */
  enablementOf(key: string): readonly CustomizationEnablement[];
  /** What the side channel proxies for the server's MCP Apps, when it serves any (mcp-app.ts). */
  appOf?(server: string): McpAppInfo | undefined;
}

function enablement(view: LiveView, key: string): { enablement?: readonly CustomizationEnablement[] } {
  const entries = view.enablementOf(key);
  return entries.length === 0 ? {} : { enablement: entries };
}

function runningServer(
  base: { id: string; uri: string; name: string; range?: McpServerCustomization['range'] },
  key: string,
  state: McpServerState,
  view: LiveView,
): McpServerCustomization {
  const icons = state.kind === 'stopped' ? undefined : view.iconsOf(base.name);
  const app = state.kind === 'ready' ? view.appOf?.(base.name) : undefined;
  return {
    type: 'mcpServer',
    ...base,
    ...(icons === undefined ? {} : { icons }),
    ...enablement(view, key),
    state,
    ...(state.kind === 'ready' ? { channel: view.channelOf(base.name) } : {}),
    ...(app === undefined ? {} : { mcpApp: app }),
  };
}

function pluginServer(server: PluginServer, view: LiveView, ids: IdMinter): McpServerCustomization {
  const declared = server.declaration;
  const base = { id: ids.idFor(declared.key), uri: declared.uri, name: declared.name, range: declared.range };
  const state = server.runs ? view.stateOf(declared.name) : notRunState(declared.name, server.reason);
  return runningServer(base, declared.key, state, view);
}

function agent(declared: AgentDeclaration, ids: IdMinter, enabled = true): AgentCustomization {
  return {
    type: 'agent',
    id: ids.idFor(declared.key),
    uri: declared.uri,
    name: declared.name,
    ...(enabled ? {} : { enabled: false }),
    ...(declared.description === undefined ? {} : { description: declared.description }),
    ...(declared.model === undefined ? {} : { model: declared.model }),
    ...(declared.tools === undefined ? {} : { tools: declared.tools }),
    ...(declared.disableModelInvocation === undefined ? {} : { disableModelInvocation: declared.disableModelInvocation }),
    ...(declared.disableUserInvocation === undefined ? {} : { disableUserInvocation: declared.disableUserInvocation }),
  };
}

function plugin(loaded: LoadedPlugin, view: LiveView, ids: IdMinter): PluginCustomization {
  const declared = loaded.declaration;
  return {
    type: 'plugin',
    id: ids.idFor(declared.key),
    uri: declared.uri,
    name: declared.name,
    ...(declared.icons === undefined ? {} : { icons: declared.icons }),
    ...(declared.version === undefined ? {} : { version: declared.version }),
    ...enablement(view, declared.key),
    load: loaded.load,
    // Read (so never "not parsed yet"): a plugin that failed to load contributes nothing, `[]`.
    children: [...loaded.servers.map((s) => pluginServer(s, view, ids)), ...declared.agents.map((a) => agent(a, ids))],
  };
}

/** The whole list, resolved. */
export function buildCustomizations(sources: ListSources, view: LiveView, ids: IdMinter): Customization[] {
  const servers = sources.configServers.map((name) => {
    const range = sources.config.ranges.get(name);
    const base = { id: ids.idFor(configServerKey(name)), uri: sources.config.uri, name, ...(range === undefined ? {} : { range }) };
    return runningServer(base, configServerKey(name), view.stateOf(name), view);
  });
  const agents = (sources.agents ?? []).map((a) => agent(a.declaration, ids, a.containerEnabled));
  return [...servers, ...agents, ...sources.plugins.map((p) => plugin(p, view, ids))];
}
