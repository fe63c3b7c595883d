/**
 * The tool surface's settings, compiled once from the gateway config: the global deferral rule,
 * each server's `defer` and `alwaysLoad`, the `tools/list` page size and the per-session bound on
 * loaded tools. Pure and frozen; the hot paths only look things up.
 */
import type { DeferToolsSetting, ServerDeferSetting } from '../search/deferral.js';

/** Which of a server's tools are pinned (`alwaysLoad`): all of them, some upstream names, or none. */
export type PinnedTools = 'all' | ReadonlySet<string>;

export interface ServerSurfaceSettings {
  readonly defer: ServerDeferSetting;
  readonly alwaysLoad: PinnedTools;
}

export interface ToolSurfaceOptions {
  readonly deferTools: DeferToolsSetting;
  /** Per server; a server absent here follows the global setting and pins nothing. */
  readonly servers: ReadonlyMap<string, ServerSurfaceSettings>;
  /** `tools/list` page size; undefined: one page. */
  readonly pageSize: number | undefined;
  readonly maxLoadedTools: number;
}

export interface SurfaceConfig {
  readonly catalogue: { readonly deferTools: DeferToolsSetting; readonly pageSize?: number | undefined; readonly maxLoadedTools: number };
  readonly servers: Readonly<Record<string, { readonly defer?: boolean | null | undefined; readonly alwaysLoad: boolean | readonly string[] }>>;
}

const NONE: ReadonlySet<string> = new Set();

type ServerSurfaceConfig = SurfaceConfig['servers'][string];

function serverSettings(server: ServerSurfaceConfig): ServerSurfaceSettings {
  const alwaysLoad: PinnedTools = server.alwaysLoad === true ? 'all' : server.alwaysLoad === false ? NONE : new Set(server.alwaysLoad);
  return Object.freeze({ defer: server.defer ?? undefined, alwaysLoad });
}

/** The per-server maps compiled here: `addServerSurface` extends them, nothing else writes them. */
const growable = new WeakMap<ToolSurfaceOptions, Map<string, ServerSurfaceSettings>>();

export function compileToolSurfaceOptions(config: SurfaceConfig): ToolSurfaceOptions {
  const servers = new Map<string, ServerSurfaceSettings>();
  for (const [name, server] of Object.entries(config.servers)) servers.set(name, serverSettings(server));
  const options: ToolSurfaceOptions = Object.freeze({
    deferTools: config.catalogue.deferTools,
    servers,
    pageSize: config.catalogue.pageSize,
    maxLoadedTools: config.catalogue.maxLoadedTools,
  });
  growable.set(options, servers);
  return options;
}

/**
 * A server a reload adds: its `defer` and `alwaysLoad` join `options` (every surface compiled
 * from them reads the same map), before the server joins any endpoint's roster.
 */
export function addServerSurface(options: ToolSurfaceOptions, name: string, server: ServerSurfaceConfig): void {
  const servers = growable.get(options);
  if (servers === undefined) throw new TypeError('addServerSurface: options not compiled by compileToolSurfaceOptions');
  servers.set(name, serverSettings(server));
}

/** Whether upstream tool `name` of `server` is pinned. */
export function isPinned(options: ToolSurfaceOptions, server: string, name: string): boolean {
  const pinned = options.servers.get(server)?.alwaysLoad;
  return pinned === 'all' || (pinned !== undefined && pinned.has(name));
}
