/**
 * Reading every plugin the gateway is given: directories named one by one (config `plugins`) and
 * directories whose sub-directories are plugins (config `pluginDirs`). Order is deterministic —
 * listed plugins in their order, then each plugin directory's sub-directories by name — and so is
 * the outcome of a clash: a directory reached twice is read once, and a second plugin claiming a
 * name already loaded is an `error` naming the first, never a silent replacement (its servers
 * would otherwise take over the first one's catalogue names and stored decisions).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deepFreeze } from '../config/load.js';
import { failedPlugin, readPlugin } from './read-plugin.js';
import type { PluginDeclaration, ReadPluginOptions } from './types.js';

/** Most plugins read in all; beyond it the rest are reported, not read. */
export const MAX_PLUGINS = 256;

export interface PluginSources {
  /** Plugin directories, each one plugin. */
  readonly plugins?: readonly string[];
  /** Directories whose (non-hidden) sub-directories are plugins. */
  readonly pluginDirs?: readonly string[];
}

export interface PluginSet {
  readonly plugins: readonly PluginDeclaration[];
  /** Problems with the directories themselves (unreadable, too many entries); no value is echoed. */
  readonly problems: readonly string[];
}

/** The sub-directories of `dir` (symlinks to directories included), hidden ones left out, by name. */
async function subDirectories(dir: string): Promise<{ dirs: string[]; problem?: string }> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const dirs: string[] = [];
    for (const entry of entries.filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() || (entry.isSymbolicLink() && (await stat(full).catch(() => undefined))?.isDirectory() === true)) dirs.push(full);
    }
    return { dirs };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return { dirs: [], problem: `plugin directory ${pathToFileURL(dir).href} cannot be listed (${code})` };
  }
}

/**
 * Replaces every plugin whose name an earlier one already has with an `error` declaration naming
 * the earlier one's manifest. Exported for callers that assemble plugin lists themselves.
 */
export function withUniqueNames(plugins: readonly PluginDeclaration[]): PluginDeclaration[] {
  const first = new Map<string, PluginDeclaration>();
  return plugins.map((plugin) => {
    const earlier = first.get(plugin.name);
    if (earlier === undefined) {
      first.set(plugin.name, plugin);
      return plugin;
    }
    return failedPlugin(plugin.name, plugin.root, plugin.uri, {
      plugin: plugin.name,
      file: plugin.uri,
      field: 'name',
      message: `is already the name of the plugin declared at ${earlier.uri}; this one is not loaded`,
    });
  });
}

/** Reads every plugin of `sources`. */
export async function readPluginSet(sources: PluginSources, options: ReadPluginOptions): Promise<PluginSet> {
  const problems: string[] = [];
  const dirs: string[] = (sources.plugins ?? []).map((dir) => path.resolve(dir));
  for (const parent of sources.pluginDirs ?? []) {
    const listed = await subDirectories(path.resolve(parent));
    if (listed.problem !== undefined) problems.push(listed.problem);
    dirs.push(...listed.dirs);
  }
  if (dirs.length > MAX_PLUGINS) {
    problems.push(`${dirs.length} plugin directories given; only the first ${MAX_PLUGINS} are read`);
    dirs.length = MAX_PLUGINS;
  }
  const plugins: PluginDeclaration[] = [];
  const roots = new Set<string>();
  // One at a time: plugins are few, and reading in order keeps data directories and diagnostics
  // deterministic without a second sort.
  for (const dir of dirs) {
    const plugin = await readPlugin(dir, options);
    if (roots.has(plugin.root)) continue;
    roots.add(plugin.root);
    plugins.push(plugin);
  }
  return deepFreeze({ plugins: withUniqueNames(plugins), problems });
}

/** Reads the plugins in the sub-directories of each of `pluginDirs`. */
export async function readPluginDirs(pluginDirs: readonly string[], options: ReadPluginOptions): Promise<PluginSet> {
  return readPluginSet({ pluginDirs }, options);
}
