/**
 * Reading every plugin the gateway is given: directories named one by one (config `plugins`) and
 * directories whose sub-directories are plugins (config `pluginDirs`). Order is deterministic —
 * listed plugins in their order, then each plugin directory's sub-directories by name. A
 * directory reached twice is read once. A name claimed by two plugin directories is contested and
 * fails closed: every claimant is an `error` naming the others, and none of them is read further
 * (no server, no agent, no data directory). Letting one win — by order, as before — let a
 * directory `0-helper/` whose manifest says `dice-kit` take the genuine plugin's catalogue names,
 * stored decisions and `PLUGIN_DATA`; refusing both tells the operator, who can rename or remove one.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { deepFreeze } from '../config/load.js';
import { failedPlugin, readPluginBody, readPluginHead, type PluginHead } from './read-plugin.js';
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

/** A plugin read as far as its claimed name, with the manifest's file URI. */
type Claim = { readonly head: PluginHead; readonly name: string; readonly uri: string };

function claimOf(head: PluginHead): Claim {
  return head.ok ? { head, name: head.manifest.name, uri: head.manifest.uri } : { head, name: head.declaration.name, uri: head.declaration.uri };
}

/**
 * Names claimed by more than one usable plugin, each with its claimants' manifest URIs in order. A
 * plugin that failed before naming itself (named after its directory) claims nothing.
 */
export function contestedNames(claims: ReadonlyArray<{ readonly name: string; readonly uri: string; readonly usable: boolean }>): Map<string, string[]> {
  const byName = new Map<string, string[]>();
  for (const claim of claims) {
    if (!claim.usable) continue;
    const uris = byName.get(claim.name);
    if (uris === undefined) byName.set(claim.name, [claim.uri]);
    else uris.push(claim.uri);
  }
  for (const [name, uris] of byName) if (uris.length < 2) byName.delete(name);
  return byName;
}

/** The error declaration of one claimant of a contested name, naming the other claimants. */
function contestedPlugin(claim: Claim, root: string, claimants: readonly string[]): PluginDeclaration {
  const others = claimants.filter((uri) => uri !== claim.uri);
  return failedPlugin(claim.name, root, claim.uri, {
    plugin: claim.name,
    file: claim.uri,
    field: 'name',
    message: `is also claimed by the plugin declared at ${others.join(', ')}; a name claimed twice loads no claimant (rename or remove one)`,
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
  const claims: Claim[] = [];
  const roots = new Set<string>();
  // One at a time: plugins are few, and reading in order keeps diagnostics deterministic without a
  // second sort. Only manifests first: the name each directory claims decides whether it is read on.
  for (const dir of dirs) {
    const head = await readPluginHead(dir);
    const root = head.ok ? head.root : head.declaration.root;
    if (roots.has(root)) continue;
    roots.add(root);
    claims.push(claimOf(head));
  }
  const contested = contestedNames(claims.map((claim) => ({ name: claim.name, uri: claim.uri, usable: claim.head.ok })));
  const plugins: PluginDeclaration[] = [];
  for (const claim of claims) {
    const { head } = claim;
    if (!head.ok) plugins.push(head.declaration);
    else {
      const claimants = contested.get(claim.name);
      plugins.push(claimants === undefined ? await readPluginBody(head, options) : contestedPlugin(claim, head.root, claimants));
    }
  }
  return deepFreeze({ plugins, problems });
}

/** Reads the plugins in the sub-directories of each of `pluginDirs`. */
export async function readPluginDirs(pluginDirs: readonly string[], options: ReadPluginOptions): Promise<PluginSet> {
  return readPluginSet({ pluginDirs }, options);
}
