/**
 * MCP Apps (extension `io.modelcontextprotocol/ui`, SEP-1865, stable 2026-01-26) through a
 * gateway that merges several servers. An App is a `ui://` resource that tools point at with
 * `_meta.ui.resourceUri` (or the deprecated flat `_meta["ui/resourceUri"]`); the host reads it
 * with `resources/read` from the server that declared the tool. Everything of it passes through
 * intact — except that two upstreams may use the same `ui://` URI, and one merged endpoint
 * cannot route one URI to two servers.
 *
 * So a `ui://` URI that more than one server uses (lists in `resources/list` or names from a
 * tool) is rewritten for every server after the first in merge order, scheme-preservingly: it
 * stays a `ui://` URI, with the server's name in front of the original rest
 * (`ui://dashboard` of server `beta` → `ui://beta/dashboard`), so it is readable and never
 * another server's. The first server keeps the URI as it is. The same plan rewrites the URI in
 * tool lists, call results, `resources/list`, and reads route back to the owner with the
 * upstream's own URI (and the read's contents carry the exposed one).
 *
 * Pure: the plan is derived from the per-server lists alone, in merge order, so it is the same
 * for every list and every call made from the same lists.
 */

/** The MCP Apps extension identifier (SEP-1865, "Extension Identifier"). */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The deprecated flat form of `_meta.ui.resourceUri` (SEP-1865, "Resource Discovery"). */
const FLAT_RESOURCE_URI = 'ui/resourceUri';
/** Most `ui://` URIs one server contributes to a plan; beyond it the rest pass unrewritten. */
const MAX_URIS_PER_SERVER = 10_000;

type Meta = Record<string, unknown>;

const isUiUri = (value: unknown): value is string => typeof value === 'string' && value.startsWith('ui://') && value.length > 5;

function metaOf(value: unknown): Meta | undefined {
  const meta = (value as { _meta?: unknown } | null | undefined)?._meta;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta) ? (meta as Meta) : undefined;
}

/** The `ui://` URIs a tool (or a call result) points at through its `_meta`. */
export function uiUrisOfMeta(carrier: unknown): string[] {
  const meta = metaOf(carrier);
  if (meta === undefined) return [];
  const found: string[] = [];
  const ui = meta.ui as { resourceUri?: unknown } | undefined;
  if (typeof ui === 'object' && ui !== null && isUiUri(ui.resourceUri)) found.push(ui.resourceUri);
  if (isUiUri(meta[FLAT_RESOURCE_URI])) found.push(meta[FLAT_RESOURCE_URI]);
  return found;
}

/** One server's lists, as far as Apps are concerned. */
export interface UiSource {
  readonly server: string;
  readonly tools: readonly unknown[];
  readonly resources: ReadonlyArray<{ uri: string }>;
}

/** Where an exposed `ui://` URI goes: its owner and the URI the owner knows it by. */
export interface UiTarget {
  readonly server: string;
  readonly uri: string;
}

export interface UiUriPlan {
  /** The URI `server` uses for `uri` as clients see it: rewritten, or `uri` itself. */
  exposed(server: string, uri: string): string;
  /** The owner of an exposed `ui://` URI some tool or listing named; undefined for any other. */
  target(exposed: string): UiTarget | undefined;
  /** True when the plan rewrites nothing (no two servers share a `ui://` URI). */
  readonly empty: boolean;
}

function rewrittenFor(server: string, uri: string, taken: ReadonlySet<string>): string {
  const rest = uri.slice('ui://'.length);
  for (let n = 1; ; n++) {
    const candidate = `ui://${n === 1 ? server : `${server}~${n}`}/${rest}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * The plan for `sources` (in merge order): every `ui://` URI each server lists or points at,
 * the first server keeping a shared URI and each later one getting its own.
 */
export function planUiUris(sources: readonly UiSource[]): UiUriPlan {
  const usedBy: Array<{ server: string; uris: Set<string> }> = sources.map(({ server, tools, resources }) => {
    const uris = new Set<string>();
    for (const resource of resources) if (isUiUri(resource.uri) && uris.size < MAX_URIS_PER_SERVER) uris.add(resource.uri);
    for (const tool of tools) for (const uri of uiUrisOfMeta(tool)) if (uris.size < MAX_URIS_PER_SERVER) uris.add(uri);
    return { server, uris };
  });
  const taken = new Set<string>(usedBy.flatMap((u) => [...u.uris]));
  const owners = new Map<string, UiTarget>();
  const rewrites = new Map<string, Map<string, string>>();
  for (const { server, uris } of usedBy) {
    for (const uri of uris) {
      if (!owners.has(uri)) {
        owners.set(uri, { server, uri });
        continue;
      }
      if (owners.get(uri)!.server === server) continue;
      const exposed = rewrittenFor(server, uri, taken);
      taken.add(exposed);
      owners.set(exposed, { server, uri });
      let mine = rewrites.get(server);
      if (mine === undefined) rewrites.set(server, (mine = new Map()));
      mine.set(uri, exposed);
    }
  }
  return {
    exposed: (server, uri) => rewrites.get(server)?.get(uri) ?? uri,
    target: (exposed) => owners.get(exposed),
    empty: rewrites.size === 0,
  };
}

/**
 * `plan` for a caller that sees only the servers `serverParts` admits (an access profile): URIs
 * are exposed as for everyone, but a hidden server's `ui://` URI has no owner, so it is not read.
 */
export function narrowedPlan(plan: UiUriPlan, serverParts: ((server: string) => boolean) | undefined): UiUriPlan {
  if (serverParts === undefined) return plan;
  return {
    exposed: plan.exposed,
    target: (exposed) => {
      const target = plan.target(exposed);
      return target !== undefined && serverParts(target.server) ? target : undefined;
    },
    empty: plan.empty,
  };
}

/** `carrier` (a tool, a call result) with its `_meta` UI URIs as `server` exposes them; itself when unchanged. */
export function exposeUiMeta<T>(carrier: T, server: string, plan: UiUriPlan): T {
  const meta = metaOf(carrier);
  if (meta === undefined || plan.empty) return carrier;
  let next: Meta | undefined;
  const ui = meta.ui as Meta | undefined;
  if (typeof ui === 'object' && ui !== null && isUiUri(ui.resourceUri)) {
    const exposed = plan.exposed(server, ui.resourceUri);
    if (exposed !== ui.resourceUri) next = { ...meta, ui: { ...ui, resourceUri: exposed } };
  }
  const flat = meta[FLAT_RESOURCE_URI];
  if (isUiUri(flat)) {
    const exposed = plan.exposed(server, flat);
    if (exposed !== flat) next = { ...(next ?? meta), [FLAT_RESOURCE_URI]: exposed };
  }
  return next === undefined ? carrier : ({ ...carrier, _meta: next } as T);
}

/** A `resources/list` entry as `server` exposes it. */
export function exposeResource<T extends { uri: string }>(resource: T, server: string, plan: UiUriPlan): T {
  const exposed = plan.exposed(server, resource.uri);
  return exposed === resource.uri ? resource : { ...resource, uri: exposed };
}

/**
 * A `resources/read` result of `server` with each content's URI as clients know it: the read
 * asked for `exposed`, which the upstream knows as `upstreamUri`.
 */
export function exposeReadResult(result: Record<string, unknown>, upstreamUri: string, exposed: string): Record<string, unknown> {
  if (upstreamUri === exposed || !Array.isArray(result.contents)) return result;
  const contents = (result.contents as unknown[]).map((content) =>
    typeof content === 'object' && content !== null && (content as { uri?: unknown }).uri === upstreamUri ? { ...content, uri: exposed } : content,
  );
  return { ...result, contents };
}

/**
 * The Apps extension as the gateway advertises it: present only when some upstream advertises
 * it; its settings are the first advertiser's, with every advertiser's `mimeTypes` joined.
 */
export function mergeUiExtension(advertised: ReadonlyArray<Record<string, unknown> | undefined>): Record<string, unknown> | undefined {
  let merged: Record<string, unknown> | undefined;
  const mimeTypes: string[] = [];
  for (const settings of advertised) {
    if (settings === undefined) continue;
    merged ??= { ...settings };
    const types = settings.mimeTypes;
    if (Array.isArray(types)) for (const type of types) if (typeof type === 'string' && !mimeTypes.includes(type)) mimeTypes.push(type);
  }
  if (merged === undefined) return undefined;
  return mimeTypes.length === 0 ? merged : { ...merged, mimeTypes };
}
