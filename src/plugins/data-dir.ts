/**
 * A plugin's `PLUGIN_DATA` (Agent Plugins 1.0 §9.1): a persistent directory of its own, created
 * before any of its servers starts and kept across updates of the plugin's files. It lives under
 * the gateway's state directory as `plugin-data/<plugin name>`, so it follows the plugin's name
 * (unique among loaded plugins), not where its files happen to be, and is private to the
 * gateway's user (0700): servers keep tokens and caches there.
 */
import { chmod, lstat, mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';

export type DataDir = { readonly ok: true; readonly path: string } | { readonly ok: false; readonly message: string };

/** Where a plugin's data directory is, without creating it. */
export function pluginDataPath(stateDir: string, plugin: string): string {
  return path.join(path.resolve(stateDir), 'plugin-data', plugin);
}

/** Creates (or reuses) the data directory of `plugin`, mode 0700; refuses a symlink in its place. */
export async function ensurePluginDataDir(stateDir: string, plugin: string): Promise<DataDir> {
  const dir = pluginDataPath(stateDir, plugin);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const stat = await lstat(dir);
    if (!stat.isDirectory()) return { ok: false, message: 'the plugin data directory is not a directory' };
    await chmod(dir, 0o700);
    return { ok: true, path: await realpath(dir) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    return { ok: false, message: `the plugin data directory cannot be created (${code})` };
  }
}
