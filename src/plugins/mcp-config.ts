/**
 * Where a plugin's MCP servers are declared, per layout, and the top-level rules of each file.
 *
 * - Agent Plugins 1.0: only `mcp.json` at the root, exactly `{ "$schema", "mcpServers" }`, the
 *   `$schema` being the MCP schema of the same spec version as `plugin.json` (§7.2.1, §10.1).
 * - Open Plugins / Claude Code: `.mcp.json` at the root, plus the manifest's `mcpServers` — an
 *   inline object of servers or a `./` path to another such file. Files hold `{ "mcpServers" }`
 *   (a `$schema` is tolerated, so an Agent Plugins `mcp.json` can be pointed at).
 *
 * An invalid file disables the servers it declares, and nothing else (§7.2.2 rule 2).
 */
import path from 'node:path';
import type { PluginDiagnostic } from './diagnostics.js';
import { duplicateMembers, type JsonText } from './json-text.js';
import type { McpSource } from './mcp-servers.js';
import { entryExists, readPluginJson } from './plugin-file.js';
import { isRecord } from './json-value.js';

/** The canonical `$schema` of an Agent Plugins 1.0.0 `mcp.json`. */
export const AGENT_PLUGINS_MCP_SCHEMA = 'https://agent-plugins.org/schemas/1.0.0/mcp.schema.json';

export interface McpSources {
  readonly sources: McpSource[];
  readonly diagnostics: PluginDiagnostic[];
  /** Resolved paths of the files read, so a file named twice (directly or by a link) is read once. */
  readonly files: Set<string>;
}

/** The top-level problem of an MCP configuration file, if any. */
function topLevelProblem(json: JsonText, shape: 'agent-plugins' | 'desktop'): { field?: string; message: string } | undefined {
  const value = json.value;
  if (!isRecord(value)) return { message: 'must hold a JSON object' };
  if (duplicateMembers(json, []).size > 0) return { message: 'declares a top-level field more than once' };
  const extra = Object.keys(value).find((key) => key !== '$schema' && key !== 'mcpServers');
  if (extra !== undefined) return { message: 'may hold only "$schema" and "mcpServers"' };
  if (shape === 'agent-plugins') {
    if (value.$schema === undefined) return { field: '$schema', message: 'is required' };
    if (value.$schema !== AGENT_PLUGINS_MCP_SCHEMA) {
      return { field: '$schema', message: 'is not the Agent Plugins 1.0.0 MCP schema (the version must match plugin.json)' };
    }
  }
  if (!isRecord(value.mcpServers)) return { field: 'mcpServers', message: 'must be an object of servers' };
  return undefined;
}

async function fileSource(
  plugin: string,
  root: string,
  file: string,
  shape: 'agent-plugins' | 'desktop',
  out: McpSources,
): Promise<void> {
  const read = await readPluginJson(root, file);
  const disabled = (field: string | undefined, message: string) =>
    out.diagnostics.push({ plugin, file: read.uri, ...(field === undefined ? {} : { field }), message: `${message}; its servers are disabled` });
  if (!read.ok) return void disabled(undefined, read.message);
  if (out.files.has(read.path)) return;
  out.files.add(read.path);
  const problem = topLevelProblem(read.json, shape);
  if (problem !== undefined) return void disabled(problem.field, problem.message);
  out.sources.push({ uri: read.uri, json: read.json, at: ['mcpServers'], shape });
}

/** Agent Plugins 1.0: `mcp.json` at the root, when present. */
export async function agentPluginsMcpSources(plugin: string, root: string): Promise<McpSources> {
  const out: McpSources = { sources: [], diagnostics: [], files: new Set() };
  const file = path.join(root, 'mcp.json');
  if (await entryExists(file)) await fileSource(plugin, root, file, 'agent-plugins', out);
  return out;
}

/** Open Plugins / Claude Code: `.mcp.json` at the root, then the manifest's `mcpServers`. */
export async function desktopMcpSources(
  plugin: string,
  root: string,
  manifest: { readonly json: JsonText; readonly uri: string },
): Promise<McpSources> {
  const out: McpSources = { sources: [], diagnostics: [], files: new Set() };
  const fallback = path.join(root, '.mcp.json');
  if (await entryExists(fallback)) await fileSource(plugin, root, fallback, 'desktop', out);
  const declared = isRecord(manifest.json.value) ? manifest.json.value.mcpServers : undefined;
  if (declared === undefined) return out;
  if (isRecord(declared)) {
    out.sources.push({ uri: manifest.uri, json: manifest.json, at: ['mcpServers'], shape: 'desktop' });
  } else if (typeof declared === 'string' && declared.startsWith('./')) {
    await fileSource(plugin, root, path.join(root, declared.slice(2)), 'desktop', out);
  } else {
    out.diagnostics.push({
      plugin,
      file: manifest.uri,
      field: 'mcpServers',
      message: 'must be an object of servers or a "./" path to a JSON file; ignored',
    });
  }
  return out;
}
