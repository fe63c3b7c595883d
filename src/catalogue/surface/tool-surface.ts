/**
 * The tool surface of an endpoint: what `tools/list` shows each client, and the two meta-tools
 * that stand in for deferred tools (docs/reference.md, "Deferral"). For every merged catalogue snapshot it
 * keeps, once: the visible tools with their hints (`anthropic/alwaysLoad` for pinned tools), the
 * per-server counts the deferral rule needs, and — built on the first search, or soon after the
 * first deferred listing — the search index, assembled from one segment per server out of the
 * gateway's segment cache (`search/segment-cache.ts`), so a new snapshot (an upstream's
 * `list_changed`) tokenises only the servers whose tools changed; no query ever rebuilds anything.
 *
 * Visibility is inherited, never re-decided: everything here is derived from the merged list,
 * which holds visible tools only (filters, policy), so search cannot reveal a hidden tool, and
 * `call_tool` goes through the router's own `tools/call` path with its re-check.
 *
 * Per-caller state lives outside the shared caches: a 2025 session's `deferTools` option and
 * loaded tools in the `SessionTools` it owns, a 2026 caller's loaded tools in the
 * `LoadedNamesStore` under a hash of endpoint, principal and workspace (`callerView`).
 */
import { createHash } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/server';
import { GatewayError } from '../../errors.js';
import { memoryLoadedNames, type LoadedNamesStore } from '../../naming/loaded-names.js';
import type { MergedTools } from '../merge.js';
import { decideDeferral, type DeferralDecision } from '../search/deferral.js';
import { SegmentCache } from '../search/segment-cache.js';
import type { SearchableTool } from '../search/snapshot.js';
import { assembleToolIndex, type ToolIndex } from '../search/tool-index.js';
import { pageOf, listFingerprint } from './list-page.js';
import type { LoadedTools } from './loaded-tools.js';
import { callArguments, CALL_TOOL, META_TOOL_NAMES, metaTools, searchArguments, SEARCH_TOOLS } from './meta-tools.js';
import { readDeferToolsOption } from './session-option.js';
import { isPinned, type ToolSurfaceOptions } from './surface-options.js';
import type { Era } from '../../rpc/era.js';

type Params = Record<string, unknown>;
type Result = Record<string, unknown>;

export const ALWAYS_LOAD_META = 'anthropic/alwaysLoad';

/** What one 2025-era session keeps: its `deferTools` option and the tools it loaded. */
export interface SessionTools {
  deferTools: boolean | undefined;
  readonly loaded: LoadedTools;
  /** Tells the session's client its tool list changed (`notifications/tools/list_changed`). */
  announce(): void;
}

/** What the surface needs of a call: its era, and the client's `_meta` (2026 options ride there). */
export interface SurfaceCall {
  readonly era: Era;
  readonly meta: Params | undefined;
}

/** A `tools/list` answer of a view, and whether it shows tools the caller itself loaded. */
export interface ToolsListing {
  readonly result: Result;
  /**
   * The list shows tools this caller loaded: a 2026 result is then `private` with `ttlMs: 0`
   * (the caller's own loads change it, and no listen announces them).
   */
  readonly callerLoaded: boolean;
}

/** One scope's view of the surface: a 2025 session's (with its state), a 2026 caller's, or one that keeps nothing. */
export interface ToolsView {
  list(merged: MergedTools, params: Params, call: SurfaceCall): Promise<ToolsListing>;
  /**
   * Answers a meta-tool call; `undefined` when `name` is no meta-tool in this state (nothing
   * deferred), so the router treats it as any other name. `callTool` is the router's own
   * `tools/call`, with its visibility re-check.
   */
  callMeta(merged: MergedTools, params: Params, call: SurfaceCall, callTool: (params: Params) => Promise<Result>): Promise<Result> | undefined;
  /**
   * Per server of the scope, how many of its visible tools `tools/list` shows a client that sends
   * no `deferTools` option (`listed`: pinned and loaded ones included) and how many it leaves to
   * `search_tools` and `call_tool` (`deferred`) — the same decision `list` takes.
   */
  shown(merged: MergedTools): ReadonlyMap<string, { listed: number; deferred: number }>;
}

export interface ToolSurfaceDeps {
  /** Servers of the scope, in merge order. */
  readonly servers: readonly string[];
  /** A server's `initialize` instructions (indexed as a field); undefined when none or not up. */
  instructionsOf(server: string): string | undefined;
  /** The endpoint this surface serves: part of a 2026 caller's key, so loads on one endpoint never list on another. */
  readonly endpoint?: string;
  /** Where 2026 callers' loaded tools are kept; default: this process's memory. */
  readonly loadedNames?: LoadedNamesStore;
}

/** Whose loaded tools a view lists and loads into: a 2025 session's own set, a 2026 caller's stored one, or none. */
type LoadsOwner = { readonly kind: 'session'; readonly session: SessionTools } | { readonly kind: 'caller'; readonly key: string } | undefined;

/** What is derived once per merged snapshot. */
interface Snapshot {
  readonly merged: MergedTools;
  /** Visible tools as listed, pinned ones carrying the `alwaysLoad` hint. */
  readonly tools: readonly Tool[];
  readonly serverOf: ReadonlyMap<string, string>;
  readonly byName: ReadonlyMap<string, Tool>;
  readonly pinned: ReadonlySet<string>;
  readonly counts: ReadonlyArray<{ name: string; visibleTools: number }>;
  index: ToolIndex | undefined;
  indexScheduled: boolean;
}

/** A listing for one snapshot, one option and one loaded set. */
interface Listing {
  readonly tools: readonly Tool[];
  /** Some listed tool is listed only because it was loaded. */
  readonly callerLoaded: boolean;
  readonly fingerprint: () => string;
}

/** The tools a view's owner loaded, as a listing reads them. */
interface LoadedSet {
  has(name: string): boolean;
  /** Changes whenever the set does. */
  readonly version: string;
}

export class ToolSurface {
  private readonly options: ToolSurfaceOptions;
  private readonly deps: ToolSurfaceDeps;
  private readonly snapshots = new WeakMap<MergedTools, Snapshot>();
  /** Every server's tokenised tools by content, shared by the indexes of every snapshot and session of this surface. */
  readonly segments: SegmentCache;
  private readonly loadedNames: LoadedNamesStore;

  constructor(options: ToolSurfaceOptions, deps: ToolSurfaceDeps, segments: SegmentCache = new SegmentCache()) {
    this.options = options;
    this.deps = deps;
    this.segments = segments;
    this.loadedNames = deps.loadedNames ?? memoryLoadedNames();
  }

  /** The search index of a merged snapshot (built on first use, then kept with the snapshot). */
  searchIndex(merged: MergedTools): ToolIndex {
    return this.indexOf(this.snapshot(merged));
  }

  get maxLoadedTools(): number {
    return this.options.maxLoadedTools;
  }

  /** The view of one 2025 session (`session` given), or one that keeps and loads nothing. */
  view(session?: SessionTools): ToolsView {
    return this.viewFor(session === undefined ? undefined : { kind: 'session', session });
  }

  /**
   * The view of a 2026-era caller: `principal` (undefined without authentication: every caller
   * is then the one anonymous principal) in `workspace` (the request's
   * `_meta["portcullis/workspace"]`). Its loads are kept under a hash of this endpoint, principal
   * and workspace, so one caller's loads never list for another, nor on another endpoint.
   */
  callerView(principal: string | undefined, workspace: string | undefined): ToolsView {
    const key = createHash('sha256').update(JSON.stringify([this.deps.endpoint ?? '', principal ?? null, workspace ?? null])).digest('base64url');
    return this.viewFor({ kind: 'caller', key });
  }

  private viewFor(owner: LoadsOwner): ToolsView {
    const session = owner?.kind === 'session' ? owner.session : undefined;
    // Listings depend on the snapshot, the request's option and the loaded set: memoised per option
    // while the loaded set has not changed (a caller's stored set is compared by content).
    const memo = new Map<string, { merged: MergedTools; loaded: string; listing: Listing }>();
    const listing = (snapshot: Snapshot, decision: DeferralDecision, option: boolean | undefined, loaded: LoadedSet | undefined): Listing => {
      const key = String(option);
      const version = loaded?.version ?? '';
      const cached = memo.get(key);
      if (cached !== undefined && cached.merged === snapshot.merged && cached.loaded === version) return cached.listing;
      const built = this.listing(snapshot, decision, loaded, owner);
      memo.set(key, { merged: snapshot.merged, loaded: version, listing: built });
      return built;
    };

    return {
      list: async (merged, params, call) => {
        const snapshot = this.snapshot(merged);
        const option = this.option(session, call);
        const decision = this.decide(snapshot, option);
        const loaded = active(decision) ? await this.loadedSet(owner) : undefined;
        const { tools, fingerprint, callerLoaded } = listing(snapshot, decision, option, loaded);
        if (active(decision)) this.scheduleIndex(snapshot);
        const page = pageOf(tools, fingerprint, this.options.pageSize, params.cursor);
        const result = page.nextCursor === undefined ? { tools: page.items } : { tools: page.items, nextCursor: page.nextCursor };
        return { result, callerLoaded: owner?.kind === 'caller' && callerLoaded };
      },

      callMeta: (merged, params, call, callTool) => {
        const name = params.name;
        if (typeof name !== 'string' || !META_TOOL_NAMES.has(name)) return undefined;
        const snapshot = this.snapshot(merged);
        const decision = this.decide(snapshot, this.option(session, call));
        if (!active(decision)) return undefined;
        const args = objectArgument(params.arguments);
        if (name === SEARCH_TOOLS) return this.search(snapshot, decision, args, owner);
        const target = callArguments(args);
        // The inner call is a `tools/call` like any other: same routing, re-check, progress and
        // input rounds (the outer request's `requestState` / `inputResponses` travel with it).
        const { arguments: _outerArguments, name: _outerName, ...rest } = params;
        return callTool({ ...rest, name: target.name, arguments: target.arguments });
      },

      shown: (merged) => {
        const snapshot = this.snapshot(merged);
        const decision = this.decide(snapshot, session?.deferTools);
        const counts = new Map(this.deps.servers.map((server) => [server, { listed: 0, deferred: 0 }]));
        for (const tool of snapshot.tools) {
          const server = snapshot.serverOf.get(tool.name) as string;
          const count = counts.get(server);
          if (count === undefined) continue;
          // As `listing` decides: a tool named like a meta-tool is reachable through `call_tool` only.
          const listed =
            !active(decision) ||
            (!META_TOOL_NAMES.has(tool.name) && (!decision.deferred.has(server) || snapshot.pinned.has(tool.name) || session?.loaded.has(tool.name) === true));
          if (listed) count.listed += 1;
          else count.deferred += 1;
        }
        return counts;
      },
    };
  }

  /** The names an owner has loaded, with a version that changes when they do. */
  private async loadedSet(owner: LoadsOwner): Promise<LoadedSet | undefined> {
    if (owner === undefined) return undefined;
    if (owner.kind === 'session') return { has: (name) => owner.session.loaded.has(name), version: String(owner.session.loaded.version) };
    const names = await this.loadedNames.names(owner.key);
    if (names.length === 0) return undefined;
    const set = new Set(names);
    return { has: (name) => set.has(name), version: names.join('\n') };
  }

  private option(session: SessionTools | undefined, call: SurfaceCall): boolean | undefined {
    if (call.era === '2025') return session?.deferTools;
    const read = readDeferToolsOption(call.meta);
    if (!read.ok) throw new GatewayError('INVALID_PARAMS', read.message);
    return read.value;
  }

  private decide(snapshot: Snapshot, session: boolean | undefined): DeferralDecision {
    return decideDeferral({
      global: this.options.deferTools,
      session,
      servers: snapshot.counts.map(({ name, visibleTools }) => ({ name, visibleTools, defer: this.options.servers.get(name)?.defer })),
    });
  }

  private snapshot(merged: MergedTools): Snapshot {
    let snapshot = this.snapshots.get(merged);
    if (snapshot !== undefined) return snapshot;
    const serverOf = new Map<string, string>();
    const pinned = new Set<string>();
    const perServer = new Map<string, number>();
    const tools = merged.tools.map((tool) => {
      const upstream = merged.index.get(tool.name);
      const server = upstream?.server ?? '';
      serverOf.set(tool.name, server);
      perServer.set(server, (perServer.get(server) ?? 0) + 1);
      if (upstream === undefined || !isPinned(this.options, server, upstream.name)) return tool;
      pinned.add(tool.name);
      return { ...tool, _meta: { ...tool._meta, [ALWAYS_LOAD_META]: true } };
    });
    snapshot = {
      merged,
      tools,
      serverOf,
      byName: new Map(tools.map((tool) => [tool.name, tool])),
      pinned,
      counts: this.deps.servers.map((name) => ({ name, visibleTools: perServer.get(name) ?? 0 })),
      index: undefined,
      indexScheduled: false,
    };
    this.snapshots.set(merged, snapshot);
    return snapshot;
  }

  /**
   * The tools a client is shown: with nothing deferred, every visible tool; otherwise the
   * meta-tools first (so they are on the first page), then, in merge order, the tools of servers
   * not deferred, pinned tools and the session's loaded ones. An upstream tool whose exposed name
   * is a meta-tool's (possible only without namespacing) is not listed then; `call_tool` still
   * reaches it.
   */
  private listing(snapshot: Snapshot, decision: DeferralDecision, loaded: LoadedSet | undefined, owner: LoadsOwner): Listing {
    let tools: readonly Tool[];
    let callerLoaded = false;
    if (!active(decision)) {
      tools = snapshot.tools;
    } else {
      const shown = snapshot.tools.filter((tool) => {
        if (META_TOOL_NAMES.has(tool.name)) return false;
        const server = snapshot.serverOf.get(tool.name) as string;
        if (!decision.deferred.has(server) || snapshot.pinned.has(tool.name)) return true;
        const mine = loaded?.has(tool.name) === true;
        if (mine) callerLoaded = true;
        return mine;
      });
      // The caller's own view: a server none of whose tools it may see is not offered (nor named).
      const deferredServers = snapshot.counts.filter(({ name, visibleTools }) => visibleTools > 0 && decision.deferred.has(name)).map(({ name }) => name);
      const loads = owner === undefined ? undefined : owner.kind === 'session' ? 'session' : 'caller';
      tools = [...metaTools({ loads, servers: deferredServers }), ...shown];
    }
    let print: string | undefined;
    return { tools, callerLoaded, fingerprint: () => (print ??= listFingerprint(tools.map((tool) => tool.name))) };
  }

  /**
   * The snapshot's index, assembled from one segment per server: a server whose visible tools
   * read as before reuses its segment (segment-cache.ts), so only a changed server is tokenised.
   */
  private indexOf(snapshot: Snapshot): ToolIndex {
    if (snapshot.index !== undefined) return snapshot.index;
    const byServer = new Map<string, SearchableTool[]>();
    for (const tool of snapshot.tools) {
      const server = snapshot.serverOf.get(tool.name) as string;
      let tools = byServer.get(server);
      if (tools === undefined) byServer.set(server, (tools = []));
      tools.push({
        name: tool.name,
        server,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema,
      });
    }
    const segments = [...byServer].map(([server, tools]) => this.segments.segmentFor(server, this.deps.instructionsOf(server), tools));
    snapshot.index = assembleToolIndex(segments);
    return snapshot.index;
  }

  /** Builds the index soon after a deferred listing, so the first search does not wait for it. */
  private scheduleIndex(snapshot: Snapshot): void {
    if (snapshot.index !== undefined || snapshot.indexScheduled) return;
    snapshot.indexScheduled = true;
    setImmediate(() => {
      // A snapshot replaced meanwhile is built only if someone searches it.
      if (this.snapshots.get(snapshot.merged) === snapshot) this.indexOf(snapshot);
    }).unref();
  }

  private async search(snapshot: Snapshot, decision: DeferralDecision, args: Params | undefined, owner: LoadsOwner): Promise<Result> {
    const { query, limit, server, load } = searchArguments(args);
    if (load && owner === undefined) throw new GatewayError('INVALID_PARAMS', `${SEARCH_TOOLS}: "load" is not offered here; call a match with ${CALL_TOOL} instead`);
    const hits = this.indexOf(snapshot).search(query, server === undefined ? { limit } : { limit, server });
    const tools = hits.map((hit) => describe(snapshot.byName.get(hit.name) as Tool));
    const structured: Result = { tools };
    if (load && owner !== undefined) {
      const deferredHits = hits.filter((hit) => decision.deferred.has(hit.server) && !snapshot.pinned.has(hit.name)).map((hit) => hit.name);
      const { loaded, dropped } =
        owner.kind === 'session' ? owner.session.loaded.load(deferredHits) : await this.loadedNames.load(owner.key, deferredHits, this.options.maxLoadedTools);
      structured.loaded = loaded;
      if (dropped.length > 0) structured.dropped = dropped;
      // A session hears of it on its stream; a 2026 caller sees it in its next tools/list.
      if (owner.kind === 'session' && (loaded.length > 0 || dropped.length > 0)) owner.session.announce();
    }
    return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
  }
}

function active(decision: DeferralDecision): boolean {
  return decision.deferredTools > 0;
}

/** A match as `search_tools` returns it: what a client needs to call the tool. */
function describe(tool: Tool): Result {
  const out: Result = { name: tool.name };
  if (tool.title !== undefined) out.title = tool.title;
  if (tool.description !== undefined) out.description = tool.description;
  out.inputSchema = tool.inputSchema;
  return out;
}

function objectArgument(value: unknown): Params | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new GatewayError('INVALID_PARAMS', '"arguments" must be an object');
  return value as Params;
}
