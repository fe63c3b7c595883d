/**
 * Where each configured server is declared: the span of its entry (key through closing brace) in
 * the config file, read with a parser that keeps positions (`jsonc-parser`, zero-based lines,
 * UTF-16 characters). The file is read again when the list is first built; an unreadable or
 * changed-beyond-recognition file just means no `range`, never a failure.
 */
import { open } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { memberRange, parseJsonText } from '../plugins/json-text.js';
import type { TextRange } from '../plugins/types.js';

/** Config files are small; past this the ranges are left out rather than the file read whole. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export interface ConfigSource {
  /** file:// URI of the config file. */
  readonly uri: string;
  /** Server name → the span of its entry under `servers` or `mcpServers`. */
  readonly ranges: ReadonlyMap<string, TextRange>;
}

async function readBounded(file: string): Promise<string | undefined> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_CONFIG_BYTES) return undefined;
    return await handle.readFile('utf8');
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The config file's URI and the range of each of `servers` in it. */
export async function readConfigSource(file: string, servers: readonly string[]): Promise<ConfigSource> {
  const ranges = new Map<string, TextRange>();
  const text = await readBounded(file);
  const json = text === undefined ? undefined : parseJsonText(text);
  if (json !== undefined) {
    for (const name of servers) {
      const range = memberRange(json, ['servers', name]) ?? memberRange(json, ['mcpServers', name]);
      if (range !== undefined) ranges.set(name, range);
    }
  }
  return { uri: pathToFileURL(file).href, ranges };
}
