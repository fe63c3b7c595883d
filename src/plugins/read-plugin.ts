/**
 * `readPlugin`: one plugin directory in, one `PluginDeclaration` out, with the formats' failure
 * boundaries (docs/plugins.md, "Failure boundaries"):
 *
 * - no manifest, an unreadable or invalid one, or a missing/invalid `name` → load `error`,
 *   nothing of the plugin is used;
 * - an invalid MCP configuration file → its servers are disabled, load `degraded`;
 * - an invalid server entry or agent file → that entry is skipped, load `degraded`, the message
 *   naming plugin, server or agent, and field (never a value).
 *
 * Never throws for anything a plugin's files contain. The declaration is frozen.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deepFreeze } from '../config/load.js';
import { readAgentFiles } from './agents-dir.js';
import { ensurePluginDataDir, type DataDir } from './data-dir.js';
import { describeDiagnostic, loadFromDiagnostics, type PluginDiagnostic } from './diagnostics.js';
import { readIcons } from './icons.js';
import { readManifest, type Manifest } from './manifest.js';
import { agentPluginsMcpSources, desktopMcpSources } from './mcp-config.js';
import { readServerEntries, type ServerReadState } from './mcp-servers.js';
import { pluginKey } from './naming.js';
import { placeholdersFor } from './placeholders.js';
import type { PluginDeclaration, ReadPluginOptions } from './types.js';

/** A declaration for a plugin that cannot be used at all. */
export function failedPlugin(name: string, root: string, uri: string, diagnostic: PluginDiagnostic): PluginDeclaration {
  return deepFreeze({
    key: pluginKey(name),
    name,
    root,
    uri,
    load: { kind: 'error', message: describeDiagnostic(diagnostic) },
    diagnostics: [diagnostic],
    servers: [],
    agents: [],
  });
}

/**
 * The first half of reading a plugin: its root and manifest, enough to know the name it claims.
 * A plugin that cannot be used at all comes back as its final (error) declaration.
 */
export type PluginHead =
  | { readonly ok: true; readonly root: string; readonly manifest: Manifest }
  | { readonly ok: false; readonly declaration: PluginDeclaration };

/** Finds the plugin root of `dir` and reads its manifest, touching nothing else. */
export async function readPluginHead(dir: string): Promise<PluginHead> {
  const absolute = path.resolve(dir);
  const dirName = path.basename(absolute);
  const dirUri = pathToFileURL(`${absolute}${path.sep}`).href;
  let root: string;
  try {
    root = await realpath(absolute);
    if (!(await stat(root)).isDirectory()) throw new Error('not a directory');
  } catch {
    return { ok: false, declaration: failedPlugin(dirName, absolute, dirUri, { plugin: dirName, file: dirUri, message: 'the plugin directory does not exist or is not a directory' }) };
  }
  const read = await readManifest(root);
  if (!read.ok) {
    const diagnostic = { plugin: dirName, file: read.uri, ...(read.field === undefined ? {} : { field: read.field }), message: read.message };
    return { ok: false, declaration: failedPlugin(dirName, root, read.uri, diagnostic) };
  }
  return { ok: true, root, manifest: read.manifest };
}

/**
 * The second half: servers, agents and icons of a plugin whose name is its own. Creates the
 * plugin's data directory when a stdio server needs it, so it runs only once the name is settled.
 */
export async function readPluginBody(head: Extract<PluginHead, { ok: true }>, options: ReadPluginOptions): Promise<PluginDeclaration> {
  return deepFreeze(await readComponents(head.manifest, head.root, options));
}

/** Reads the plugin in `dir` (both halves; a plugin set settles names in between). */
export async function readPlugin(dir: string, options: ReadPluginOptions): Promise<PluginDeclaration> {
  const head = await readPluginHead(dir);
  return head.ok ? readPluginBody(head, options) : head.declaration;
}

async function readComponents(manifest: Manifest, root: string, options: ReadPluginOptions): Promise<PluginDeclaration> {
  const plugin = manifest.name;
  const diagnostics: PluginDiagnostic[] = [...manifest.diagnostics];
  const icons = manifest.layout === 'agent-plugins' ? { diagnostics: [] } : await readIcons(manifest.fields, root, { plugin, file: manifest.uri });
  diagnostics.push(...icons.diagnostics);

  const mcp =
    manifest.layout === 'agent-plugins'
      ? await agentPluginsMcpSources(plugin, root)
      : await desktopMcpSources(plugin, root, { json: manifest.json, uri: manifest.uri });
  diagnostics.push(...mcp.diagnostics);
  let dataDir: Promise<DataDir> | undefined;
  const state: ServerReadState = {
    plugin,
    root,
    placeholders: placeholdersFor(manifest.layout),
    dataDir: () => (dataDir ??= ensurePluginDataDir(options.stateDir, plugin)),
    seen: new Set(),
    examined: { count: 0 },
    servers: [],
    diagnostics,
  };
  for (const source of mcp.sources) await readServerEntries(source, state);

  const agents = await readAgentFiles(path.join(root, 'agents'), root, plugin);
  diagnostics.push(...agents.diagnostics);
  return {
    key: pluginKey(plugin),
    name: plugin,
    layout: manifest.layout,
    ...(manifest.version === undefined ? {} : { version: manifest.version }),
    ...(manifest.description === undefined ? {} : { description: manifest.description }),
    root,
    uri: manifest.uri,
    ...('icons' in icons && icons.icons !== undefined ? { icons: icons.icons } : {}),
    load: loadFromDiagnostics(diagnostics),
    diagnostics,
    servers: state.servers,
    agents: agents.agents,
  };
}
