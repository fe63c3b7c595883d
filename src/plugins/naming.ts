/**
 * Names and durable keys of everything a plugin contributes. Plugin servers join the catalogue as
 * `<plugin>.<server>`, plugin agents as `<plugin>:<agent>`; both parts are validated here so the
 * joined names are unambiguous (a server name has no `.`, an agent name no `:`).
 *
 * Durable keys are where stored decisions (enablement) live. They derive from the contributing
 * source and the declared name, never from process-lifetime ids, so a plugin whose files are
 * re-read keeps its users' decisions; they are never sent on the wire.
 */

/**
 * Agent Plugins 1.0 §5.5, applied to every layout: 1-64 of `a-z`, `0-9`, `-`, `.`, alphanumeric at
 * both ends, no `--` or `..`. These names become path segments (the plugin's data directory) and
 * name prefixes, so the rule is also what keeps them from meaning anything to a filesystem.
 */
const PLUGIN_NAME = /^[a-z0-9](?:[a-z0-9.-]{0,62}[a-z0-9])?$/;

/** Agent names: 1-64, kebab-case (lowercase alphanumeric words joined by single hyphens). */
const AGENT_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * Server names inside a plugin: the gateway config's server-name alphabet without `.`, so that
 * `<plugin>.<server>` splits at its last dot. At most 48, like config keys.
 */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;

/** True for a valid plugin name (the Agent Plugins rule above). */
export function isPluginName(name: string): boolean {
  return PLUGIN_NAME.test(name) && !name.includes('--') && !name.includes('..');
}

/** True for a valid agent `name`: 1-64 characters of kebab-case. */
export function isAgentName(name: string): boolean {
  return name.length <= 64 && AGENT_NAME.test(name);
}

/** True for a server name a plugin may declare. */
export function isPluginServerName(name: string): boolean {
  return SERVER_NAME.test(name);
}

/** The catalogue name of a plugin's server: `<plugin>.<server>`. */
export function pluginServerName(plugin: string, server: string): string {
  return `${plugin}.${server}`;
}

/** The published name of a plugin's agent: `<plugin>:<agent>`. */
export function pluginAgentName(plugin: string, agent: string): string {
  return `${plugin}:${agent}`;
}

/** Durable key of a plugin. */
export function pluginKey(plugin: string): string {
  return `plugin:${plugin}`;
}

/** Durable key of a plugin's server: `plugin:<plugin>#mcp=<server>`. */
export function pluginServerKey(plugin: string, server: string): string {
  return `${pluginKey(plugin)}#mcp=${server}`;
}

/** Durable key of a plugin's agent: `plugin:<plugin>#agent=<agent>`. */
export function pluginAgentKey(plugin: string, agent: string): string {
  return `${pluginKey(plugin)}#agent=${agent}`;
}

/** Durable key of an agent from the gateway's own agents directory. */
export function gatewayAgentKey(agent: string): string {
  return `agents#agent=${agent}`;
}

/**
 * A plugin-authored key (a field or server name that failed validation) made safe to quote in a
 * diagnostic: JSON-quoted, so control characters cannot forge log lines, and cut to 64 characters.
 */
export function quoteName(name: string): string {
  const cut = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return JSON.stringify(cut);
}
