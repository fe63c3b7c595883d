/**
 * Reading one JSON file of a plugin package: contained in the plugin root (symlinks resolved),
 * bounded in size, strict JSON with positions kept.
 */
import { lstat } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { describeReadFailure, readBoundedText } from './bounded-read.js';
import { resolveWithin } from './containment.js';
import { parseJsonText, type JsonText } from './json-text.js';

/** A manifest or MCP configuration beyond this is not one. */
export const MAX_JSON_FILE_BYTES = 1024 * 1024;

export type PluginJsonFile =
  | { readonly ok: true; readonly json: JsonText; readonly uri: string; readonly path: string }
  | { readonly ok: false; readonly uri: string; readonly message: string };

/** True when something (a file, a directory, a dangling symlink) exists at `file`. */
export async function entryExists(file: string): Promise<boolean> {
  return lstat(file).then(
    () => true,
    () => false,
  );
}

/** Reads `file` (absolute, lexically under `root`) as a JSON document of the plugin rooted at `root`. */
export async function readPluginJson(root: string, file: string): Promise<PluginJsonFile> {
  const uri = pathToFileURL(file).href;
  const contained = await resolveWithin(root, file);
  if (!contained.ok) {
    const message = contained.reason === 'escapes' ? 'resolves outside the plugin root' : 'cannot be resolved';
    return { ok: false, uri, message };
  }
  if (!contained.exists) return { ok: false, uri, message: 'file not found' };
  const read = await readBoundedText(contained.path, MAX_JSON_FILE_BYTES);
  if (!read.ok) return { ok: false, uri, message: describeReadFailure(read.reason, MAX_JSON_FILE_BYTES) };
  const json = parseJsonText(read.text);
  if (json === undefined) return { ok: false, uri, message: 'is not valid JSON' };
  return { ok: true, json, uri, path: contained.path };
}
