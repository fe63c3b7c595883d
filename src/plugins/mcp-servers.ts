/**
 * The server entries of one MCP configuration source (an `mcp.json`, a `.mcp.json` or a manifest's
 * inline `mcpServers`), each checked and resolved on its own: an invalid entry is skipped and
 * reported, and never stops its siblings (Agent Plugins 1.0 §7.2.2 rule 3). Entries come back in
 * the order the file declares them, each with the span of its declaration.
 */
import type { PluginDiagnostic } from './diagnostics.js';
import { isRecord } from './json-value.js';
import { duplicateMembers, memberRange, type JsonText } from './json-text.js';
import { isPluginServerName, pluginServerKey, pluginServerName, quoteName } from './naming.js';
import { checkServerEntry, type EntryShape } from './server-entry.js';
import { resolveServerEntry, type ResolveContext } from './server-config.js';
import type { PluginServerDeclaration } from './types.js';

/** Most servers one plugin may declare, across all its sources. */
export const MAX_PLUGIN_SERVERS = 64;

export interface McpSource {
  readonly uri: string;
  readonly json: JsonText;
  /** Where the `mcpServers` object is inside `json`. */
  readonly at: readonly string[];
  readonly shape: EntryShape;
}

export interface ServerReadState extends ResolveContext {
  readonly plugin: string;
  /** Names already declared by an earlier source of the same plugin. */
  readonly seen: Set<string>;
  /** Entries looked at so far, across the plugin's sources. */
  readonly examined: { count: number };
  readonly servers: PluginServerDeclaration[];
  readonly diagnostics: PluginDiagnostic[];
}

/** Appends the valid servers of `source` to `state.servers`, and a diagnostic per skipped entry. */
export async function readServerEntries(source: McpSource, state: ServerReadState): Promise<void> {
  const block = objectAt(source.json.value, source.at);
  const duplicated = duplicateMembers(source.json, source.at);
  const report = (server: string | undefined, field: string | undefined, message: string) =>
    state.diagnostics.push({
      plugin: state.plugin,
      file: source.uri,
      ...(server === undefined ? {} : { server }),
      ...(field === undefined ? {} : { field }),
      message,
    });
  for (const name of memberNames(source.json, source.at)) {
    // Counts every entry, valid or not, so a file of many bad entries costs bounded diagnostics too.
    if (state.examined.count++ >= MAX_PLUGIN_SERVERS) {
      report(undefined, 'mcpServers', `declares more than ${MAX_PLUGIN_SERVERS} servers; the rest are ignored`);
      return;
    }
    if (!isPluginServerName(name)) {
      report(undefined, `mcpServers.${quoteName(name)}`, 'server names are 1-48 letters, digits, "_" or "-"; entry skipped');
      continue;
    }
    if (duplicated.has(name) || state.seen.has(name)) {
      if (!state.seen.has(name)) state.seen.add(name);
      report(name, undefined, 'is declared more than once; skipped');
      continue;
    }
    state.seen.add(name);
    const checked = checkServerEntry(block?.[name], source.shape, state.placeholders);
    const resolved = checked.ok ? await resolveServerEntry(checked.entry, state) : checked;
    if (!resolved.ok) {
      report(name, resolved.field, `${resolved.message}; server skipped`);
      continue;
    }
    const range = memberRange(source.json, [...source.at, name]);
    if (range === undefined) throw new Error('a parsed member has no position');
    const base = {
      key: pluginServerKey(state.plugin, name),
      name: pluginServerName(state.plugin, name),
      serverName: name,
      uri: source.uri,
      range,
    };
    state.servers.push(
      resolved.supported
        ? { ...base, supported: true, config: resolved.config }
        : { ...base, supported: false, transport: resolved.transport, reason: resolved.reason },
    );
  }
}

function objectAt(value: unknown, at: readonly string[]): Record<string, unknown> | undefined {
  let current = value;
  for (const key of at) current = (current as Record<string, unknown> | undefined)?.[key];
  return isRecord(current) ? current : undefined;
}

/** Member names in source order (JSON.parse would put integer-like names first), once each. */
function memberNames(json: JsonText, at: readonly string[]): string[] {
  let node = json.tree;
  for (const key of at) {
    const member = node.children?.find((child) => child.children?.[0]?.value === key);
    const value = member?.children?.[1];
    if (value === undefined) return [];
    node = value;
  }
  const names: string[] = [];
  for (const member of node.type === 'object' ? (node.children ?? []) : []) {
    const key = member.children?.[0]?.value;
    if (typeof key === 'string' && !names.includes(key)) names.push(key);
  }
  return names;
}
