/**
 * Finding and checking a plugin's manifest. The layout is where the manifest sits, checked in
 * this order (the first present wins, so a package carrying several speaks the portable one):
 *
 * 1. `plugin.json` — Agent Plugins 1.0: closed schema; unknown top-level fields and a non-object
 *    `extensions` are reported and ignored, every other violation rejects the plugin (§5.2).
 * 2. `.plugin/plugin.json` — Open Plugins.
 * 3. `.claude-plugin/plugin.json` — Claude Code.
 *
 * For the last two, `name` is required; the fields read here (`name`, `version`, `description`)
 * must have their types; the rest of those open schemas is left alone.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PluginDiagnostic } from './diagnostics.js';
import type { JsonText } from './json-text.js';
import { isPluginName, quoteName } from './naming.js';
import { entryExists, readPluginJson } from './plugin-file.js';
import type { PluginLayout } from './types.js';
import { isRecord } from './json-value.js';

/** The canonical `$schema` of an Agent Plugins 1.0.0 `plugin.json`. */
export const AGENT_PLUGINS_MANIFEST_SCHEMA = 'https://agent-plugins.org/schemas/1.0.0/plugin.schema.json';

const LAYOUTS: readonly { layout: PluginLayout; file: readonly string[] }[] = [
  { layout: 'agent-plugins', file: ['plugin.json'] },
  { layout: 'open-plugins', file: ['.plugin', 'plugin.json'] },
  { layout: 'claude-code', file: ['.claude-plugin', 'plugin.json'] },
];

const AGENT_PLUGINS_FIELDS = new Set([
  '$schema',
  'name',
  'version',
  'description',
  'author',
  'homepage',
  'repository',
  'license',
  'keywords',
  'extensions',
]);
const AUTHOR_FIELDS = new Set(['name', 'email', 'url']);
const DEFAULT_AGENT_PATHS = new Set(['./agents', './agents/']);
/** Unknown fields reported one by one; the rest are counted, so a hostile manifest costs bounded reports. */
const MAX_REPORTED_FIELDS = 16;

export interface Manifest {
  readonly layout: PluginLayout;
  readonly uri: string;
  readonly json: JsonText;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly name: string;
  readonly version?: string;
  readonly description?: string;
  /** Non-fatal problems: reported, the plugin still loads. */
  readonly diagnostics: readonly PluginDiagnostic[];
}

export type ManifestRead =
  | { readonly ok: true; readonly manifest: Manifest }
  | { readonly ok: false; readonly uri: string; readonly field?: string; readonly message: string };

/** Finds, reads and checks the manifest of the plugin rooted at `root` (a realpath). */
export async function readManifest(root: string): Promise<ManifestRead> {
  const found = await firstPresent(root);
  if (found === undefined) {
    return {
      ok: false,
      uri: pathToFileURL(`${root}${path.sep}`).href,
      message: 'no plugin manifest (plugin.json, .plugin/plugin.json or .claude-plugin/plugin.json)',
    };
  }
  const read = await readPluginJson(root, found.file);
  if (!read.ok) return { ok: false, uri: read.uri, message: `manifest ${read.message}` };
  const fields = read.json.value;
  if (!isRecord(fields)) return { ok: false, uri: read.uri, message: 'manifest must hold a JSON object' };
  const fatal = (field: string, message: string): ManifestRead => ({ ok: false, uri: read.uri, field, message });

  const { name } = fields;
  if (name === undefined) return fatal('name', 'is required');
  if (typeof name !== 'string' || !isPluginName(name)) {
    return fatal('name', 'must be 1-64 of a-z, 0-9, "-" and ".", alphanumeric at both ends, without "--" or ".."');
  }
  for (const field of ['version', 'description'] as const) {
    if (fields[field] !== undefined && typeof fields[field] !== 'string') return fatal(field, 'must be a string');
  }
  const diagnostics: PluginDiagnostic[] = [];
  const report = (field: string, message: string) => diagnostics.push({ plugin: name, file: read.uri, field, message });
  if (found.layout === 'agent-plugins') {
    const problem = agentPluginsProblem(fields, report);
    if (problem !== undefined) return fatal(problem.field, problem.message);
  } else if (fields.agents !== undefined && !(typeof fields.agents === 'string' && DEFAULT_AGENT_PATHS.has(fields.agents))) {
    report('agents', 'custom agent locations are not read (agents come from agents/*.md); ignored');
  }
  return {
    ok: true,
    manifest: {
      layout: found.layout,
      uri: read.uri,
      json: read.json,
      fields,
      name,
      ...(typeof fields.version === 'string' ? { version: fields.version } : {}),
      ...(typeof fields.description === 'string' ? { description: fields.description } : {}),
      diagnostics,
    },
  };
}

async function firstPresent(root: string): Promise<{ layout: PluginLayout; file: string } | undefined> {
  for (const candidate of LAYOUTS) {
    const file = path.join(root, ...candidate.file);
    if (await entryExists(file)) return { layout: candidate.layout, file };
  }
  return undefined;
}

/** The fatal problem of an Agent Plugins manifest, reporting the non-fatal ones on the way. */
function agentPluginsProblem(
  fields: Record<string, unknown>,
  report: (field: string, message: string) => void,
): { field: string; message: string } | undefined {
  if (fields.$schema === undefined) return { field: '$schema', message: 'is required' };
  if (fields.$schema !== AGENT_PLUGINS_MANIFEST_SCHEMA) {
    return { field: '$schema', message: 'is not a supported Agent Plugins version (1.0.0 is)' };
  }
  for (const field of ['homepage', 'repository', 'license'] as const) {
    if (fields[field] !== undefined && typeof fields[field] !== 'string') return { field, message: 'must be a string' };
  }
  const { author, keywords, extensions } = fields;
  if (author !== undefined) {
    if (!isRecord(author)) return { field: 'author', message: 'must be an object' };
    for (const [key, value] of Object.entries(author)) {
      if (!AUTHOR_FIELDS.has(key)) return { field: 'author', message: 'may hold only "name", "email" and "url"' };
      if (typeof value !== 'string') return { field: `author.${key}`, message: 'must be a string' };
    }
  }
  if (keywords !== undefined && (!Array.isArray(keywords) || keywords.some((k) => typeof k !== 'string'))) {
    return { field: 'keywords', message: 'must be an array of strings' };
  }
  if (extensions !== undefined && !isRecord(extensions)) report('extensions', 'must be an object; ignored');
  const unknown = Object.keys(fields).filter((key) => !AGENT_PLUGINS_FIELDS.has(key));
  for (const key of unknown.slice(0, MAX_REPORTED_FIELDS)) report(quoteName(key), 'is not an Agent Plugins 1.0 manifest field; ignored');
  if (unknown.length > MAX_REPORTED_FIELDS) {
    report('$', `${unknown.length - MAX_REPORTED_FIELDS} more fields that are not Agent Plugins 1.0 manifest fields; ignored`);
  }
  return undefined;
}
