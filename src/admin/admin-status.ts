/**
 * What the admin page shows, gathered from the running gateway: each server's state, transport,
 * mode, what it says it is (its `serverInfo`), its side channel URL, its live stdio children, the
 * tools it lists upstream and what the asking admin is shown of it (shown-counts.ts), its recent
 * requests (observability/server-activity.ts), restarts since start and last error; the 2025-era
 * sessions per endpoint, the customisation list, the last reload's outcome, and the most recent
 * audit lines (the audit log's in-memory ring, when the audit log is on).
 * A last error is shown only when it is one of the gateway's own (`GatewayError`): those messages
 * are written never to hold a command, URL, header or secret; anything else is "see the log".
 * What a server says of itself is its own text: kept short here, and the page shows it as text.
 */
import { GatewayError } from '../errors.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { effectiveState } from '../upstream/registry-entry.js';
import { countRestarts } from '../upstream/restart-counter.js';
import type { CustomizationList } from '../customizations/customization-list.js';
import type { ReloadOutcome } from '../lifecycle/reload.js';
import type { AuditEntry } from '../observability/audit-ring.js';
import type { ActivitySummary } from '../observability/server-activity.js';
import { ShownCountsMemo, type AdminCaller, type CountShown, type ShownCounts } from './shown-counts.js';

/** What an upstream said of itself in its handshake, each field cut to {@link MAX_INFO_CHARS}. */
export interface UpstreamInfo {
  readonly name?: string;
  readonly title?: string;
  readonly version?: string;
  readonly description?: string;
}

export interface AdminServer {
  readonly name: string;
  readonly transport: string;
  readonly mode: string;
  readonly isolation: string;
  readonly state: string;
  /** Its `serverInfo` while its primary connection is up. */
  readonly upstream?: UpstreamInfo;
  /** The URL of its side channel (`<MCP URL>/servers/<name>`), as clients are told it. */
  readonly sideChannel: string;
  /** Live child processes of a stdio server (primary, pool, sessions', principals'); absent for HTTP. */
  readonly children?: number;
  /** Tools the server lists on its primary connection, before the gateway's filters; absent while it is down. */
  readonly upstreamTools?: number;
  /** What the asking admin is shown of it (see `AdminStatus.view`); absent: nothing (not shown to this caller, or not counted). */
  readonly shown?: ShownCounts;
  /** Its requests over the last minutes, as the gateway measured them. */
  readonly activity: ActivitySummary;
  readonly restarts: number;
  readonly lastError: string | undefined;
}

export interface AdminCustomization {
  /** The list's id, what `POST <path>/customizations/toggle` names. */
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly state: string;
  /** Its global enablement (no global decision: enabled); absent: it has no enablement (an agent). */
  readonly globallyEnabled?: boolean;
}

export interface AdminStatus {
  /** When this status was read (ISO 8601). */
  readonly at: string;
  readonly gateway: {
    readonly name: string;
    readonly version: string;
    /** The aggregate MCP URL clients are told (`listen.publicUrl`, else the bound address). */
    readonly mcpUrl: string;
    /** Where Prometheus scrapes this gateway; absent: not served. */
    readonly metricsPath?: string;
  };
  /**
   * Whose view the servers' `shown` counts are: the asking principal's (absent without auth,
   * where every client is the one anonymous caller), as a 2026 request on the aggregate endpoint
   * with no workspace and no `deferTools` option lists them. `counted` is false when the count
   * did not finish in time (a server still connecting): the next refresh tries again.
   */
  readonly view: { readonly principal?: string; readonly counted: boolean };
  readonly servers: readonly AdminServer[];
  /** 2025-era sessions by endpoint (`aggregate`, `servers/<name>`); 2026-era clients hold none. */
  readonly sessions: ReadonlyArray<{ readonly endpoint: string; readonly legacy: number }>;
  readonly customizations: readonly AdminCustomization[];
  readonly lastReload: (ReloadOutcome & { readonly at: string }) | undefined;
  /** The latest audit lines, newest first (those after `auditAfter` when asked so); absent: the audit log is off. */
  readonly audit?: readonly AuditEntry[];
  /** The number of the latest audit line recorded: ask for the lines after it next time. */
  readonly auditLatest?: number;
}

export interface AdminSourcesOptions {
  readonly name: string;
  readonly version: string;
  readonly registry: UpstreamRegistry;
  /** The URLs clients are told: the aggregate's and each side channel's. */
  readonly urls: { readonly aggregate: string; sideChannel(server: string): string };
  /** Where `/metrics` is served; absent: it is not. */
  readonly metricsPath?: string;
  readonly sessions: () => ReadonlyArray<{ endpoint: string; legacy: number }>;
  readonly customizations: CustomizationList | undefined;
  /** The audit log's ring of recent lines; absent when the audit log is off. */
  readonly audit?: { recent(after?: number): AuditEntry[]; readonly latest: number };
  /** Each server's recent requests (the gateway's metrics keep them). */
  readonly activity: { summary(server: string): ActivitySummary };
  /** Counts what a caller is shown of each server, through its own listing view of the aggregate. */
  readonly countShown: CountShown;
}

/** What an upstream may say of itself goes on the page at this length at most. */
const MAX_INFO_CHARS = 200;

function upstreamInfo(serverInfo: Readonly<Record<string, unknown>> | undefined): UpstreamInfo | undefined {
  if (serverInfo === undefined) return undefined;
  const info: Record<string, string> = {};
  for (const field of ['name', 'title', 'version', 'description'] as const) {
    const value = serverInfo[field];
    if (typeof value === 'string' && value !== '') info[field] = value.length > MAX_INFO_CHARS ? `${value.slice(0, MAX_INFO_CHARS - 1)}…` : value;
  }
  return info;
}

const SAFE_FALLBACK = 'failed; the gateway log has the details';

function lastErrorOf(error: Error | undefined): string | undefined {
  if (error === undefined) return undefined;
  return error instanceof GatewayError ? error.message : SAFE_FALLBACK;
}

function customizationRows(list: CustomizationList | undefined): AdminCustomization[] {
  if (list === undefined) return [];
  const items = (JSON.parse(list.freshFor({}).json) as { items: Array<Record<string, unknown>> }).items;
  const rows: AdminCustomization[] = [];
  const add = (item: Record<string, unknown>) => {
    const state = item.state as { kind?: unknown } | undefined;
    const load = item.load as { kind?: unknown } | undefined;
    const id = String(item.id);
    const key = list.ids.keyFor(id);
    const toggleable = key !== undefined && list.enablement?.has(key) === true;
    // The unviewed snapshot's entries are the global ones alone.
    const global = (item.enablement as Array<{ kind?: unknown; enabled?: unknown }> | undefined)?.find((entry) => entry.kind === 'global');
    rows.push({
      id,
      name: String(item.name),
      type: String(item.type),
      state: String(state?.kind ?? load?.kind ?? ''),
      ...(toggleable ? { globallyEnabled: global?.enabled !== false } : {}),
    });
    for (const child of (item.children as Array<Record<string, unknown>> | undefined) ?? []) add(child);
  };
  for (const item of items) add(item);
  return rows;
}

/** Follows restarts from construction on; `status()` reads everything else when asked. */
export class AdminSources {
  private readonly options: AdminSourcesOptions;
  private readonly restarts = new Map<string, number>();
  private readonly stopCounting: () => void;
  private readonly shown: ShownCountsMemo;
  private reload: AdminStatus['lastReload'];

  constructor(options: AdminSourcesOptions) {
    this.options = options;
    this.stopCounting = countRestarts(options.registry, (server) => this.restarts.set(server, (this.restarts.get(server) ?? 0) + 1));
    // Who sees what moves with the enablement decisions (the list's version) and with reloads.
    this.shown = new ShownCountsMemo(options.registry, options.countShown, () => `${options.customizations?.snapshot().version ?? 0}@${this.reload?.at ?? ''}`);
  }

  /** Remembers the latest reload's outcome, for the page. */
  noteReload(outcome: ReloadOutcome): void {
    this.reload = { ...outcome, at: new Date().toISOString() };
  }

  /**
   * The page's data as `caller` (the admin asking) sees it; `auditAfter`: only the audit lines
   * numbered after it (a live page asks for what it does not have yet).
   */
  async status(caller: AdminCaller, auditAfter = 0): Promise<AdminStatus> {
    const { registry, urls, audit } = this.options;
    const shown = this.shown.countsFor(caller);
    const children = registry.stdioChildren();
    const servers = await Promise.all(
      // In merge order (as every list shows them); a server a reload removed keeps its place
      // (hidden, stopped) but is not one of the gateway's any more.
      registry.roster.names.filter((name) => !registry.isRemoved(name)).map(async (name) => {
        const entry = registry.entry(name);
        const link = entry.primary.current;
        const tools = link === undefined ? undefined : await link.list('tools').then((list) => list.length, () => undefined);
        const info = upstreamInfo(link?.serverInfo);
        const server: AdminServer = {
          name: entry.name,
          transport: entry.config.transport,
          mode: entry.config.mode,
          isolation: entry.config.isolation,
          state: effectiveState(entry),
          ...(info === undefined ? {} : { upstream: info }),
          sideChannel: urls.sideChannel(entry.name),
          ...(entry.config.transport === 'stdio' ? { children: children.get(entry.name) ?? 0 } : {}),
          ...(tools === undefined ? {} : { upstreamTools: tools }),
          activity: this.options.activity.summary(entry.name),
          restarts: this.restarts.get(entry.name) ?? 0,
          lastError: lastErrorOf(entry.primary.lastError),
        };
        return server;
      }),
    );
    const counts = await shown;
    return {
      at: new Date().toISOString(),
      gateway: {
        name: this.options.name,
        version: this.options.version,
        mcpUrl: urls.aggregate,
        ...(this.options.metricsPath === undefined ? {} : { metricsPath: this.options.metricsPath }),
      },
      view: { ...(caller.principal === undefined ? {} : { principal: caller.principal }), counted: counts !== undefined },
      servers: servers.map((server) => {
        const seen = counts?.get(server.name);
        return seen === undefined ? server : { ...server, shown: seen };
      }),
      sessions: this.options.sessions(),
      customizations: customizationRows(this.options.customizations),
      lastReload: this.reload,
      ...(audit === undefined ? {} : { audit: audit.recent(auditAfter), auditLatest: audit.latest }),
    };
  }

  close(): void {
    this.stopCounting();
  }
}
