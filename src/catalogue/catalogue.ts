/**
 * The merged, filtered, namespaced view of a scope's upstreams. Each upstream's lists are cached
 * on its link (dropped on `list_changed`); the merged view is memoised until any of those caches
 * or links changes, so `tools/list` on a warm catalogue does no upstream I/O and no re-merge.
 * Fan-out is parallel; a server whose list fails is left out of that answer (and logged), never
 * allowed to fail the whole list.
 */
import type { Prompt, Resource, ResourceTemplateType, Tool } from '@modelcontextprotocol/server';
import { findCause, GatewayError } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { CacheHint, ListKind } from '../upstream/list-cache.js';
import {
  mergePrompts,
  mergeResources,
  mergeResourceTemplates,
  mergeTools,
  type MergedPrompts,
  type MergedTools,
  type TemplateRoute,
  type VisibilityFilter,
  uiExtensionOf,
} from './merge.js';
import { exposeResource, exposeUiMeta, narrowedPlan, planUiUris, type UiUriPlan } from './ui-uris.js';
import type { Holds, ToolIntegrity } from '../integrity/tool-integrity.js';
import type { Verdict } from '../integrity/server-pins.js';
import type { UpstreamName } from '../naming/names.js';

export interface CatalogueSource {
  /** Server names in the fixed order merges use. */
  readonly servers: readonly string[];
  /** The link to list from (the scope decides: a session's own link, or the primary). */
  linkFor(server: string): Promise<UpstreamLink>;
  /** True when this view's list of `server` is the caller's own (a principal's connection): never public. */
  perCaller?(server: string): boolean;
}

/** A merged list and the freshness and scope the gateway can honestly promise for it. */
export interface Listing<T> {
  value: T;
  hint: CacheHint;
}

export interface CatalogueOptions {
  separator: string | null;
  /** Visibility of a tool: per-server enabled/disabled lists and policy globs, compiled once. */
  toolFilter: VisibilityFilter;
  /** Servers whose prompts, resources and templates this view shows; absent: every server's. */
  serverParts?: (server: string) => boolean;
  /** The view was narrowed for one caller (its access profile): its lists are never `public`. */
  narrowed?: boolean;
  /**
   * Tool integrity (integrity/tool-integrity.ts): every listing is judged against the pins before
   * names are assigned, and a held tool is left out like a filtered one; absent: nothing is judged.
   */
  integrity?: ToolIntegrity;
  logger: Logger;
}

export interface MergedResources {
  resources: Resource[];
  index: Map<string, string>;
  /** How `ui://` URIs shared by several servers are exposed and routed back (ui-uris.ts). */
  ui: UiUriPlan;
}

/** A tool the filters show but tool integrity holds: its exposed name, owner and why. */
export interface HeldTool extends UpstreamName {
  readonly verdict: Verdict;
}

/** The merged tools, with the `ui://` plan their `_meta.ui` URIs were exposed under. */
export interface CatalogueTools extends MergedTools {
  readonly ui: UiUriPlan;
  /** Exposed name → tools the filters show and tool integrity holds (a call to one is told so). */
  readonly held: ReadonlyMap<string, HeldTool>;
}

export interface MergedTemplates {
  resourceTemplates: ResourceTemplateType[];
  routes: TemplateRoute[];
}

interface Parts {
  key: string;
  lists: Array<{ server: string; items: unknown[]; instructions?: string | undefined }>;
  hint: CacheHint;
  /** Servers whose connection advertises MCP Apps (`io.modelcontextprotocol/ui`). */
  apps: Set<string>;
}

const NO_PLAN = planUiUris([]);

/**
 * What the merge of several parts may promise: the shortest lifetime any part has left (a part
 * whose upstream promised nothing, or that failed, has 0), and `public` only when every part is
 * public. A bound no part sets (no server offers the list) is 0: nothing to promise about.
 */
function mergeHints(hints: readonly CacheHint[]): CacheHint {
  let ttlMs = Number.POSITIVE_INFINITY;
  let cacheScope: CacheHint['cacheScope'] = 'public';
  for (const hint of hints) {
    ttlMs = Math.min(ttlMs, hint.ttlMs);
    if (hint.cacheScope === 'private') cacheScope = 'private';
  }
  return { ttlMs: Number.isFinite(ttlMs) ? Math.floor(ttlMs) : 0, cacheScope };
}

const FAILED_PART: CacheHint = { ttlMs: 0, cacheScope: 'private' };

const allowAll: VisibilityFilter = () => true;

/** Gateway refusals a call to a server whose list failed is told (`unavailableBecause`). */
const SAID_REFUSALS: ReadonlySet<string> = new Set(['UPSTREAM_AUTH_REQUIRED', 'INVALID_REQUEST', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_START_FAILED']);

export class Catalogue {
  private readonly source: CatalogueSource;
  private readonly options: CatalogueOptions;
  private readonly memo = new Map<ListKind, { key: string; value: unknown }>();
  private readonly linkIds = new WeakMap<UpstreamLink, number>();
  private nextLinkId = 1;
  /** Servers whose lists could not be fetched at the last merge, with why. */
  private unavailable = new Map<string, unknown>();

  constructor(source: CatalogueSource, options: CatalogueOptions) {
    this.source = source;
    this.options = options;
  }

  /**
   * The server a name would belong to if that server's list could not be fetched: a call to it is
   * then the upstream's unavailability, not an unknown name (docs/decisions.md, "Errors").
   */
  unavailableOwnerOf(exposed: string): string | undefined {
    const separator = this.options.separator;
    for (const server of this.unavailable.keys()) {
      // A server this view hides is never named, not even as down.
      if (!this.showsServer(server)) continue;
      if (separator === null || exposed.startsWith(`${server}${separator}`)) return server;
    }
    return undefined;
  }

  /**
   * The gateway's own refusal that kept `server`'s list out of the last merge, as a call to it
   * would meet it, so a call to one of its tools is told why: an authorization it needs
   * (`UPSTREAM_AUTH_REQUIRED`, a per-user server this session has no token for), a request it
   * cannot serve (`INVALID_REQUEST`), or the server unreachable for the caller (`UPSTREAM_UNAVAILABLE`:
   * no token to exchange; `UPSTREAM_START_FAILED`), found a few causes deep. Anything else (an
   * upstream's own answer) stays unsaid.
   */
  unavailableBecause(server: string): GatewayError | undefined {
    const own = findCause(this.unavailable.get(server), (value): value is GatewayError => value instanceof GatewayError);
    return own?.server === server && SAID_REFUSALS.has(own.code) ? own : undefined;
  }

  /** The servers this view merges now (enablement applied), in merge order. */
  get servers(): readonly string[] {
    return this.source.servers;
  }

  /** Whether `server`'s list could not be fetched at the last merge, which left it out. */
  leftOut(server: string): boolean {
    return this.unavailable.has(server);
  }

  /** Whether this view shows anything of `server` beyond single tools: a caller's access profile may hide it. */
  showsServer(server: string): boolean {
    return this.options.serverParts?.(server) ?? true;
  }

  /** The same predicate that filtered the list, for the re-check on every call. */
  toolVisible(server: string, name: string, exposed: string): boolean {
    return this.options.toolFilter(server, name, exposed);
  }

  async tools(): Promise<CatalogueTools> {
    return (await this.toolListing()).value;
  }

  async prompts(): Promise<MergedPrompts> {
    return (await this.promptListing()).value;
  }

  async resources(): Promise<MergedResources> {
    return (await this.resourceListing()).value;
  }

  async templates(): Promise<MergedTemplates> {
    return (await this.templateListing()).value;
  }

  /** A list result as a 2026 client gets it: the items, and what the gateway can promise about them. */
  async listing(kind: ListKind): Promise<Listing<unknown[]>> {
    switch (kind) {
      case 'tools': {
        const { value, hint } = await this.toolListing();
        return { value: value.tools, hint };
      }
      case 'prompts': {
        const { value, hint } = await this.promptListing();
        return { value: value.prompts, hint };
      }
      case 'resources': {
        const { value, hint } = await this.resourceListing();
        return { value: value.resources, hint };
      }
      case 'resourceTemplates': {
        const { value, hint } = await this.templateListing();
        return { value: value.resourceTemplates, hint };
      }
      default: {
        const unreachable: never = kind;
        return unreachable;
      }
    }
  }

  private toolListing(): Promise<Listing<CatalogueTools>> {
    return this.merged('tools', (lists, ui, holds) => {
      // Held tools keep their names (names are assigned over every listed tool), and are left out
      // after the filters, so a hidden tool is never reported as held.
      const held = new Map<string, HeldTool>();
      const filter: VisibilityFilter = (server, name, exposed) => {
        if (!this.options.toolFilter(server, name, exposed)) return false;
        const verdict = holds?.held(server, name);
        if (verdict === undefined) return true;
        held.set(exposed, { server, name, verdict });
        return false;
      };
      const merged = mergeTools(
        lists.map((l) => ({ server: l.server, tools: (l.items as Tool[]).map((tool) => exposeUiMeta(tool, l.server, ui)) })),
        { separator: this.options.separator, filter },
      );
      this.report('tool', merged.collisions, merged.duplicates.length);
      return { ...merged, ui, held };
    });
  }

  private promptListing(): Promise<Listing<MergedPrompts>> {
    return this.merged('prompts', (lists) => {
      const merged = mergePrompts(
        lists.map((l) => ({ server: l.server, prompts: l.items as Prompt[] })),
        { separator: this.options.separator, filter: allowAll },
      );
      this.report('prompt', merged.collisions, merged.duplicates.length);
      return merged;
    });
  }

  private resourceListing(): Promise<Listing<MergedResources>> {
    return this.merged('resources', (lists, ui) => {
      const merged = mergeResources(
        lists.map((l) => ({ server: l.server, resources: (l.items as Resource[]).map((resource) => exposeResource(resource, l.server, ui)) })),
      );
      if (merged.collisions.length > 0) {
        // The dropped server's resource is unreachable here: the operator renames or disables one.
        this.options.logger.warn({ collisions: merged.collisions }, 'resource URI collisions: the first server keeps each URI; the other server\'s resource is not listed or readable');
      }
      return { resources: merged.resources, index: merged.index, ui };
    });
  }

  private templateListing(): Promise<Listing<MergedTemplates>> {
    return this.merged('resourceTemplates', (lists) => {
      const merged = mergeResourceTemplates(
        lists.map((l) => ({ server: l.server, resourceTemplates: l.items as ResourceTemplateType[] })),
      );
      if (merged.rejected.length > 0) {
        this.options.logger.warn({ count: merged.rejected.length }, 'resource templates that cannot be parsed were left out');
      }
      return { resourceTemplates: merged.resourceTemplates, routes: merged.routes };
    });
  }

  /**
   * One kind's merged list, memoised on what it was merged from. Tools and resources also depend
   * on the `ui://` plan, drawn from both lists of the servers that serve MCP Apps: for those
   * kinds the other list is collected too (only when some server serves Apps), and its parts
   * join the memo key and the freshness hint.
   */
  private async merged<T>(kind: ListKind, merge: (lists: Parts['lists'], ui: UiUriPlan, holds: Holds | undefined) => T): Promise<Listing<T>> {
    const parts = await this.collect(kind);
    const other: ListKind | undefined = kind === 'tools' ? 'resources' : kind === 'resources' ? 'tools' : undefined;
    const withApps = other !== undefined && parts.apps.size > 0 ? await this.collect(other) : undefined;
    // Tools are judged on every merge whose parts changed; a decision (approval, a change another
    // replica stored) changes the integrity version, so the next listing is merged again.
    const integrity = kind === 'tools' ? this.options.integrity : undefined;
    const judgedKey = integrity === undefined ? parts.key : `${parts.key}@${integrity.version}`;
    const key = withApps === undefined ? judgedKey : `${judgedKey}#${withApps.key}`;
    const drawn = withApps === undefined ? parts.hint : mergeHints([parts.hint, withApps.hint]);
    const hint: CacheHint = this.options.narrowed === true ? { ...drawn, cacheScope: 'private' } : drawn;
    const cached = this.memo.get(kind);
    if (cached !== undefined && cached.key === key) return { value: cached.value as T, hint };
    // The plan is drawn from every Apps server's lists, before access narrowing, so a `ui://` URI
    // is rewritten the same way for every principal; a hidden server's URIs lead nowhere.
    const serverParts = this.options.serverParts;
    const planned = withApps === undefined ? NO_PLAN : this.planFor(kind === 'tools' ? parts : withApps, kind === 'tools' ? withApps : parts);
    const ui = narrowedPlan(planned, serverParts);
    const lists = kind === 'tools' || serverParts === undefined ? parts.lists : parts.lists.filter((list) => serverParts(list.server));
    // A judgement that stores something moves the version: the next listing merges once more.
    const holds = integrity === undefined ? undefined : await integrity.judge(lists);
    const value = merge(lists, ui, holds);
    this.memo.set(kind, { key, value });
    return { value, hint };
  }

  /** The `ui://` plan of the servers that serve Apps, in merge order. */
  private planFor(tools: Parts, resources: Parts): UiUriPlan {
    const apps = new Set([...tools.apps, ...resources.apps]);
    const itemsOf = (parts: Parts, server: string) => parts.lists.find((l) => l.server === server)?.items ?? [];
    return planUiUris(
      this.source.servers
        .filter((server) => apps.has(server))
        .map((server) => ({ server, tools: itemsOf(tools, server), resources: itemsOf(resources, server) as Array<{ uri: string }> })),
    );
  }

  private async collect(kind: ListKind): Promise<Parts> {
    const settled = await Promise.all(
      this.source.servers.map(async (server) => {
        try {
          const link = await this.source.linkFor(server);
          // The version is read before the list: a change announced while the list is fetched
          // must make the next merge rebuild, not be stored under the new version.
          const version = link.listVersion;
          const { items, hint } = await link.hintedList(kind);
          const settledVersion = link.listVersion === version ? version : `${version}~${Math.random()}`;
          const own = this.source.perCaller?.(server) === true;
          const apps = uiExtensionOf(link.capabilities) !== undefined;
          const instructions = kind === 'tools' ? link.instructions : undefined;
          return { server, items, instructions, apps, key: `${this.idOf(link)}.${settledVersion}`, failed: false, hint: own ? { ...hint, cacheScope: 'private' as const } : hint };
        } catch (error) {
          this.options.logger.warn(
            { server, list: kind, err: error instanceof Error ? error.message : String(error) },
            'upstream left out of a merged list',
          );
          return { server, items: [] as unknown[], apps: false, key: 'x' + Math.random(), failed: true, hint: FAILED_PART, error };
        }
      }),
    );
    this.unavailable = new Map(settled.filter((s) => s.failed).map((s) => [s.server, 'error' in s ? s.error : undefined]));
    return {
      key: settled.map((s) => s.key).join('|'),
      lists: settled.map(({ server, items, ...rest }) => ({ server, items, ...('instructions' in rest ? { instructions: rest.instructions } : {}) })),
      hint: mergeHints(settled.map((s) => s.hint)),
      apps: new Set(settled.filter((s) => s.apps).map((s) => s.server)),
    };
  }

  private idOf(link: UpstreamLink): number {
    let id = this.linkIds.get(link);
    if (id === undefined) {
      id = this.nextLinkId++;
      this.linkIds.set(link, id);
    }
    return id;
  }

  private report(what: string, collisions: MergedTools['collisions'], duplicates: number): void {
    if (collisions.length > 0 || duplicates > 0) {
      // Names and server names are configuration and catalogue data, not secrets.
      this.options.logger.warn({ collisions, duplicates }, `${what} name collisions resolved deterministically`);
    }
  }
}
