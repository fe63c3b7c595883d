/**
 * The tool surface of an endpoint: what `tools/list` shows each client, and the two meta-tools
 * that stand in for deferred tools (README, "Deferral"). For every merged catalogue snapshot it
 * keeps, once: the visible tools with their hints (`anthropic/alwaysLoad` for pinned tools), the
 * per-server counts the deferral rule needs, and — built on the first search, or soon after the
 * first deferred listing — the search index. A new snapshot (an upstream's `list_changed`) gets
 * new ones; no query ever rebuilds anything.
 *
 * Visibility is inherited, never re-decided: everything here is derived from the merged list,
 * which holds visible tools only (filters, policy), so search cannot reveal a hidden tool, and
 * `call_tool` goes through the router's own `tools/call` path with its re-check.
 *
 * Per-session state (a 2025 session's `deferTools` option and loaded tools) lives in the
 * `SessionTools` each session owns; the shared caches hold nothing of any session.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { GatewayError } from '../../errors.js';
import type { MergedTools } from '../merge.js';
import { decideDeferral, type DeferralDecision } from '../search/deferral.js';
import { buildToolIndex, type ToolIndex } from '../search/tool-index.js';
import { pageOf, listFingerprint } from './list-page.js';
import type { LoadedTools } from './loaded-tools.js';
import { callArguments, CALL_TOOL, META_TOOL_NAMES, metaTools, searchArguments, SEARCH_TOOLS } from './meta-tools.js';
import { readDeferToolsOption } from './session-option.js';
import { isPinned, type ToolSurfaceOptions } from './surface-options.js';

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
  readonly era: 'legacy' | 'modern';
  readonly meta: Params | undefined;
}

/** One scope's view of the surface: a session's (with its state), or the stateless one. */
export interface ToolsView {
  list(merged: MergedTools, params: Params, call: SurfaceCall): Result;
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
}

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
  readonly fingerprint: () => string;
}

export class ToolSurface {
  private readonly options: ToolSurfaceOptions;
  private readonly deps: ToolSurfaceDeps;
  private readonly snapshots = new WeakMap<MergedTools, Snapshot>();

  constructor(options: ToolSurfaceOptions, deps: ToolSurfaceDeps) {
    this.options = options;
    this.deps = deps;
  }

  get maxLoadedTools(): number {
    return this.options.maxLoadedTools;
  }

  /** The view of one 2025 session (`session` given) or of stateless 2026 requests. */
  view(session?: SessionTools): ToolsView {
    // Stateless listings depend only on the snapshot and the request's option: memoised per option.
    const memo = new Map<string, { merged: MergedTools; version: number; listing: Listing }>();
    const listing = (snapshot: Snapshot, decision: DeferralDecision, option: boolean | undefined): Listing => {
      const key = String(option);
      const version = session?.loaded.version ?? 0;
      const cached = memo.get(key);
      if (cached !== undefined && cached.merged === snapshot.merged && cached.version === version) return cached.listing;
      const built = this.listing(snapshot, decision, session);
      memo.set(key, { merged: snapshot.merged, version, listing: built });
      return built;
    };

    return {
      list: (merged, params, call) => {
        const snapshot = this.snapshot(merged);
        const option = this.option(session, call);
        const decision = this.decide(snapshot, option);
        const { tools, fingerprint } = listing(snapshot, decision, option);
        if (active(decision)) this.scheduleIndex(snapshot);
        const page = pageOf(tools, fingerprint, this.options.pageSize, params.cursor);
        return page.nextCursor === undefined ? { tools: page.items } : { tools: page.items, nextCursor: page.nextCursor };
      },

      callMeta: (merged, params, call, callTool) => {
        const name = params.name;
        if (typeof name !== 'string' || !META_TOOL_NAMES.has(name)) return undefined;
        const snapshot = this.snapshot(merged);
        const decision = this.decide(snapshot, this.option(session, call));
        if (!active(decision)) return undefined;
        const args = objectArgument(params.arguments);
        if (name === SEARCH_TOOLS) return Promise.resolve(this.search(snapshot, decision, args, call, session));
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

  private option(session: SessionTools | undefined, call: SurfaceCall): boolean | undefined {
    if (call.era === 'legacy') return session?.deferTools;
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
  private listing(snapshot: Snapshot, decision: DeferralDecision, session: SessionTools | undefined): Listing {
    let tools: readonly Tool[];
    if (!active(decision)) {
      tools = snapshot.tools;
    } else {
      const loaded = session?.loaded;
      const shown = snapshot.tools.filter((tool) => {
        if (META_TOOL_NAMES.has(tool.name)) return false;
        const server = snapshot.serverOf.get(tool.name) as string;
        return !decision.deferred.has(server) || snapshot.pinned.has(tool.name) || loaded?.has(tool.name) === true;
      });
      const deferredServers = this.deps.servers.filter((s) => decision.deferred.has(s));
      tools = [...metaTools({ canLoad: session !== undefined, servers: deferredServers }), ...shown];
    }
    let print: string | undefined;
    return { tools, fingerprint: () => (print ??= listFingerprint(tools.map((tool) => tool.name))) };
  }

  private indexOf(snapshot: Snapshot): ToolIndex {
    snapshot.index ??= buildToolIndex({
      tools: snapshot.tools.map((tool) => ({
        name: tool.name,
        server: snapshot.serverOf.get(tool.name) as string,
        ...(tool.title === undefined ? {} : { title: tool.title }),
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.inputSchema,
      })),
      servers: this.deps.servers.map((name) => {
        const instructions = this.deps.instructionsOf(name);
        return instructions === undefined ? { name } : { name, instructions };
      }),
    });
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

  private search(snapshot: Snapshot, decision: DeferralDecision, args: Params | undefined, call: SurfaceCall, session: SessionTools | undefined): Result {
    const { query, limit, server, load } = searchArguments(args);
    if (load && (call.era !== 'legacy' || session === undefined)) {
      throw new GatewayError('INVALID_PARAMS', `${SEARCH_TOOLS}: "load" needs a 2025-era session; call a match with ${CALL_TOOL} instead`);
    }
    const hits = this.indexOf(snapshot).search(query, server === undefined ? { limit } : { limit, server });
    const tools = hits.map((hit) => describe(snapshot.byName.get(hit.name) as Tool));
    const structured: Result = { tools };
    if (load && session !== undefined) {
      const deferredHits = hits.filter((hit) => decision.deferred.has(hit.server) && !snapshot.pinned.has(hit.name)).map((hit) => hit.name);
      const { loaded, dropped } = session.loaded.load(deferredHits);
      structured.loaded = loaded;
      if (dropped.length > 0) structured.dropped = dropped;
      if (loaded.length > 0 || dropped.length > 0) session.announce();
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
