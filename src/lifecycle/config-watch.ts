/**
 * The opt-in file watch (`lifecycle.watch`): the config file and the policy file it names are
 * watched, and a change to either asks for a reload, once per burst of events (editors write a
 * file in several steps, or replace it with a rename). Each file's directory is watched, not the
 * file itself, so a replaced file is still followed.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import { parseConfigText } from '../config/config-text.js';
import type { Logger } from '../observability/logger.js';

/** Events closer together than this are one change. */
const SETTLE_MS = 200;

/** The config file and, when its `policy` is a `.json` path, the policy file (absolute paths). */
export async function watchedFiles(configFile: string): Promise<string[]> {
  const files = [resolve(configFile)];
  try {
    const raw = parseConfigText(await readFile(configFile, 'utf8')) as { policy?: unknown };
    if (typeof raw.policy === 'string' && raw.policy.toLowerCase().endsWith('.json')) files.push(resolve(dirname(configFile), raw.policy));
  } catch {
    // an unreadable or invalid file: the reload reports it; the config file alone is watched
  }
  return files;
}

/** Calls `onChange` after each settled change to one of `files`; returns the stop function. */
export function watchFiles(files: readonly string[], onChange: () => void, logger: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  const changed = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      onChange();
    }, SETTLE_MS);
    timer.unref();
  };
  const byDir = new Map<string, Set<string>>();
  for (const file of files) {
    const names = byDir.get(dirname(file)) ?? new Set<string>();
    names.add(basename(file));
    byDir.set(dirname(file), names);
  }
  const watchers: FSWatcher[] = [];
  for (const [dir, names] of byDir) {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (name === null || names.has(name.toString())) changed();
      });
      watcher.on('error', (error) => logger.warn({ err: error.message }, 'config watch stopped'));
      watchers.push(watcher);
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'cannot watch the config directory; reload with SIGHUP or `portcullis reload`');
    }
  }
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    for (const watcher of watchers) watcher.close();
  };
}
