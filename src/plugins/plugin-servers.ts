/**
 * Plugins as the gateway runs them: every configured plugin read (`plugins`, `pluginDirs`), the
 * policy applied to each of its servers (`plugin-policy.ts`), and the servers that may run handed
 * over under their catalogue names `<plugin>.<server>`, beside the config's own servers.
 *
 * Failure boundaries stay the formats' (docs/plugins.md): a server the policy refuses, or whose
 * catalogue name a config server already has (the config is the more trusted layer and keeps it),
 * is skipped and its plugin becomes `degraded` with a diagnostic naming plugin, server and field;
 * nothing a plugin holds stops another plugin or the gateway. A plugin configured
 * `enabled: false` is read and listed, and its servers are handed over like any other's: that is
 * the operator's global decision, which keeps them stopped (never started) until a global toggle
 * enables the plugin (docs/customizations.md, "Enablement").
 */
import { realpath } from 'node:fs/promises';
import type { GatewayConfig, ServerConfig } from '../config/schema.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import { loadFromDiagnostics, type PluginDiagnostic } from './diagnostics.js';
import { placeholdersFor } from './placeholders.js';
import { checkPluginServer } from './plugin-policy.js';
import { readPluginSet } from './read-plugin-dirs.js';
import type { PluginDeclaration, PluginLoad, PluginServerDeclaration } from './types.js';

/** One declared server and whether the gateway runs it. */
export type PluginServer =
  | { readonly declaration: PluginServerDeclaration; readonly runs: true; readonly config: ServerConfig }
  | { readonly declaration: PluginServerDeclaration; readonly runs: false; readonly reason: 'unsupported' | 'refused' };

export interface LoadedPlugin {
  readonly declaration: PluginDeclaration;
  /** The config's global decision for the whole plugin (`{ "path", "enabled": false }`). */
  readonly enabled: boolean;
  /** The reader's outcome with the policy's refusals added. */
  readonly load: PluginLoad;
  readonly diagnostics: readonly PluginDiagnostic[];
  readonly servers: readonly PluginServer[];
}

export interface LoadedPlugins {
  readonly plugins: readonly LoadedPlugin[];
  /** Problems with the plugin directories themselves (unreadable, too many). */
  readonly problems: readonly string[];
  /** The servers to start, by catalogue name. */
  readonly servers: Readonly<Record<string, ServerConfig>>;
}

type PluginsConfig = Pick<GatewayConfig, 'plugins' | 'pluginDirs' | 'stateDir' | 'policy' | 'servers'>;

/** Reads every configured plugin and decides which of its servers run. Never throws for plugin content. */
export async function loadPlugins(config: PluginsConfig): Promise<LoadedPlugins> {
  if (config.plugins.length === 0 && config.pluginDirs.length === 0) return { plugins: [], problems: [], servers: {} };
  const set = await readPluginSet({ plugins: config.plugins.map((p) => p.path), pluginDirs: config.pluginDirs }, { stateDir: config.stateDir });
  const disabledRoots = await rootsOf(config.plugins.filter((entry) => !entry.enabled));
  const rules = compilePolicyRules(config.policy);
  const servers: Record<string, ServerConfig> = {};
  const plugins = set.plugins.map((declaration): LoadedPlugin => {
    const enabled = !disabledRoots.has(declaration.root);
    const diagnostics = [...declaration.diagnostics];
    const reserved = declaration.layout === undefined ? [] : placeholdersFor(declaration.layout).reserved;
    const decided = declaration.servers.map((server): PluginServer => {
      if (!server.supported) return { declaration: server, runs: false, reason: 'unsupported' };
      const refusal = refusalOf(server, declaration, reserved, config, rules);
      if (refusal !== undefined) {
        diagnostics.push(refusal);
        return { declaration: server, runs: false, reason: 'refused' };
      }
      return { declaration: server, runs: true, config: server.config };
    });
    const load = declaration.load.kind === 'error' ? declaration.load : loadFromDiagnostics(diagnostics);
    return { declaration, enabled, load, diagnostics, servers: decided };
  });
  for (const plugin of plugins) for (const server of plugin.servers) if (server.runs) servers[server.declaration.name] = server.config;
  return { plugins, problems: set.problems, servers };
}

function refusalOf(
  server: Extract<PluginServerDeclaration, { supported: true }>,
  plugin: PluginDeclaration,
  reservedEnv: readonly string[],
  config: PluginsConfig,
  rules: ReturnType<typeof compilePolicyRules>,
): PluginDiagnostic | undefined {
  const where = { plugin: plugin.name, file: server.uri, server: server.serverName };
  if (Object.hasOwn(config.servers, server.name)) {
    return { ...where, field: 'name', message: 'its catalogue name is already a configured server; the configured one is kept' };
  }
  const verdict = checkPluginServer({ config: server.config, root: plugin.root, reservedEnv, stdioAllowed: config.policy.plugins.stdio, rules });
  return verdict.ok ? undefined : { ...where, field: verdict.field, message: verdict.message };
}

/** The resolved roots of the plugin directories the config disabled (the reader keys plugins by root). */
async function rootsOf(entries: PluginsConfig['plugins']): Promise<Set<string>> {
  const roots = await Promise.all(entries.map((entry) => realpath(entry.path).catch(() => entry.path)));
  return new Set(roots);
}
