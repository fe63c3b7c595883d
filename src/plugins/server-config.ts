/**
 * Turns a shape-checked server entry into the gateway server config it runs as, applying the
 * rules that need the filesystem and the plugin restrictions:
 *
 * - a `./` command must resolve (symlinks included) to a regular file inside the plugin root, and
 *   runs by that resolved path; a bare command is left for PATH lookup at spawn;
 * - `cwd` is `./…` or `${PLUGIN_ROOT}…` (inside the root, existing) or `${PLUGIN_DATA}…` (inside
 *   the data directory, created when missing); absent, the plugin root;
 * - placeholders are expanded once in `args`, `env` values and `cwd`, and the child's environment
 *   gets `PLUGIN_ROOT` / `PLUGIN_DATA` set over whatever the entry's `env` holds;
 * - every plugin server is `mode: "optional"` (a plugin never blocks the gateway's readiness) and
 *   a remote one never gets `allowPrivateNetwork` (plugins are the least trusted layer).
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { httpServerSchema, sseServerSchema, stdioServerSchema, type ServerConfig } from '../config/server-schema.js';
import { resolveWithin } from './containment.js';
import type { DataDir } from './data-dir.js';
import { expandPlaceholders, leadingPlaceholder, reservedEnv, type Placeholders, type PluginPaths } from './placeholders.js';
import type { ServerEntry } from './server-entry.js';

export interface ResolveContext {
  /** The plugin root, already a realpath. */
  readonly root: string;
  readonly placeholders: Placeholders;
  /** The plugin's data directory, created on first use. */
  readonly dataDir: () => Promise<DataDir>;
}

export type ResolvedServer =
  | { readonly ok: true; readonly supported: true; readonly config: ServerConfig }
  | { readonly ok: true; readonly supported: false; readonly transport: 'sse'; readonly reason: string }
  | { readonly ok: false; readonly field?: string; readonly message: string };

function fail(field: string | undefined, message: string): ResolvedServer {
  return field === undefined ? { ok: false, message } : { ok: false, field, message };
}

/** The server config an entry runs as, or the field that stops it (a message without values). */
export async function resolveServerEntry(entry: ServerEntry, context: ResolveContext): Promise<ResolvedServer> {
  switch (entry.type) {
    case 'stdio':
      return resolveStdio(entry, context);
    case 'streamable-http': {
      const parsed = httpServerSchema.safeParse({
        transport: 'streamableHttp',
        url: entry.url,
        headers: Object.fromEntries(entry.headers),
        allowPrivateNetwork: false,
        mode: 'optional',
      });
      return parsed.success ? { ok: true, supported: true, config: parsed.data } : fail(undefined, 'does not form a valid server');
    }
    case 'sse': {
      // The gateway's HTTP+SSE upstream transport (2024-11-05); the policy's legacySse.upstream
      // still decides whether it may be used (plugin-policy.ts).
      const parsed = sseServerSchema.safeParse({
        transport: 'sse',
        url: entry.url,
        headers: Object.fromEntries(entry.headers),
        allowPrivateNetwork: false,
        mode: 'optional',
      });
      return parsed.success ? { ok: true, supported: true, config: parsed.data } : fail(undefined, 'does not form a valid server');
    }
    default: {
      const unreachable: never = entry;
      throw new TypeError(`unknown entry type ${(unreachable as { type: string }).type}`);
    }
  }
}

async function resolveStdio(entry: Extract<ServerEntry, { type: 'stdio' }>, context: ResolveContext): Promise<ResolvedServer> {
  const command = await resolveCommand(entry.command, context.root);
  if (!command.ok) return fail('command', command.message);
  const data = await context.dataDir();
  if (!data.ok) return fail(undefined, data.message);
  const paths: PluginPaths = { root: context.root, data: data.path };
  const expand = (value: string) => expandPlaceholders(value, context.placeholders, paths);
  const cwd = entry.cwd === undefined ? { ok: true as const, path: context.root } : await resolveCwd(expand(entry.cwd), entry.cwd, context, paths);
  if (!cwd.ok) return fail('cwd', cwd.message);
  const env = {
    ...Object.fromEntries(entry.env.map(([name, value]) => [name, expand(value)])),
    ...reservedEnv(context.placeholders, paths),
  };
  const parsed = stdioServerSchema.safeParse({
    transport: 'stdio',
    command: command.path,
    args: entry.args.map(expand),
    env,
    cwd: cwd.path,
    mode: 'optional',
  });
  return parsed.success ? { ok: true, supported: true, config: parsed.data } : fail(undefined, 'does not form a valid server');
}

type PathCheck = { ok: true; path: string } | { ok: false; message: string };

async function resolveCommand(command: string, root: string): Promise<PathCheck> {
  if (!command.startsWith('./')) return { ok: true, path: command };
  const resolved = await resolveWithin(root, path.join(root, command.slice(2)));
  if (!resolved.ok) {
    return { ok: false, message: resolved.reason === 'escapes' ? 'resolves outside the plugin root' : 'cannot be resolved' };
  }
  if (!resolved.exists) return { ok: false, message: 'names a file the plugin does not contain' };
  const info = await stat(resolved.path).catch(() => undefined);
  if (info?.isFile() !== true) return { ok: false, message: 'is not a regular file' };
  return { ok: true, path: resolved.path };
}

/** `expanded` is the cwd after placeholder expansion; the form is judged on the declared `raw`. */
async function resolveCwd(expanded: string, raw: string, context: ResolveContext, paths: PluginPaths): Promise<PathCheck> {
  let base: string;
  let candidate: string;
  if (raw.startsWith('./')) {
    base = paths.root;
    candidate = path.join(paths.root, expanded.slice(2));
  } else {
    const leading = leadingPlaceholder(raw, context.placeholders);
    if (leading === undefined) return { ok: false, message: 'must start with "./", "${PLUGIN_ROOT}" or "${PLUGIN_DATA}"' };
    base = leading.root ? paths.root : paths.data;
    candidate = expanded;
  }
  const inRoot = base === paths.root;
  const resolved = await resolveWithin(base, candidate);
  if (!resolved.ok) {
    if (resolved.reason === 'unresolvable') return { ok: false, message: 'cannot be resolved' };
    return { ok: false, message: inRoot ? 'resolves outside the plugin root' : 'resolves outside the plugin data directory' };
  }
  if (!resolved.exists) {
    if (inRoot) return { ok: false, message: 'names a directory the plugin does not contain' };
    try {
      await mkdir(resolved.path, { recursive: true, mode: 0o700 });
    } catch (error) {
      return { ok: false, message: `cannot be created in the plugin data directory (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
    }
  }
  const info = await stat(resolved.path).catch(() => undefined);
  if (info?.isDirectory() !== true) return { ok: false, message: 'is not a directory' };
  return { ok: true, path: resolved.path };
}
