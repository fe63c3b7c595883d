/**
 * What the admin page shows, gathered from the running gateway: each server's state, transport,
 * mode, tool count (from its primary connection's list), restarts since start and last error,
 * the 2025-era sessions per endpoint, the customisation list, the last reload's outcome, and the
 * most recent audit lines (the audit log's in-memory ring, when the audit log is on).
 * A last error is shown only when it is one of the gateway's own (`GatewayError`): those messages
 * are written never to hold a command, URL, header or secret; anything else is "see the log".
 */
import { GatewayError } from '../errors.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { effectiveState } from '../upstream/registry-entry.js';
import { countRestarts } from '../upstream/restart-counter.js';
import type { CustomizationList } from '../customizations/customization-list.js';
import type { ReloadOutcome } from '../lifecycle/reload.js';
import type { AuditEntry } from '../observability/audit-ring.js';

export interface AdminServer {
  readonly name: string;
  readonly transport: string;
  readonly mode: string;
  readonly isolation: string;
  readonly state: string;
  /** Tools the server lists on its primary connection (before the gateway's filters); undefined while it is down. */
  readonly tools: number | undefined;
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
  readonly gateway: { readonly name: string; readonly version: string };
  readonly servers: readonly AdminServer[];
  /** 2025-era sessions by endpoint (`aggregate`, `servers/<name>`); 2026-era clients hold none. */
  readonly sessions: ReadonlyArray<{ readonly endpoint: string; readonly legacy: number }>;
  readonly customizations: readonly AdminCustomization[];
  readonly lastReload: (ReloadOutcome & { readonly at: string }) | undefined;
  /** The latest audit lines, newest first; absent: the audit log is off. */
  readonly audit?: readonly AuditEntry[];
}

export interface AdminSourcesOptions {
  readonly name: string;
  readonly version: string;
  readonly registry: UpstreamRegistry;
  readonly sessions: () => ReadonlyArray<{ endpoint: string; legacy: number }>;
  readonly customizations: CustomizationList | undefined;
  /** The audit log's ring of recent lines; absent when the audit log is off. */
  readonly audit?: { recent(): AuditEntry[] };
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
  private reload: AdminStatus['lastReload'];

  constructor(options: AdminSourcesOptions) {
    this.options = options;
    this.stopCounting = countRestarts(options.registry, (server) => this.restarts.set(server, (this.restarts.get(server) ?? 0) + 1));
  }

  /** Remembers the latest reload's outcome, for the page. */
  noteReload(outcome: ReloadOutcome): void {
    this.reload = { ...outcome, at: new Date().toISOString() };
  }

  async status(): Promise<AdminStatus> {
    const { registry } = this.options;
    const servers = await Promise.all(
      // A server a reload removed keeps its entry (hidden, stopped): not one of the gateway's any more.
      [...registry.entries.values()].filter((entry) => !registry.isRemoved(entry.name)).map(async (entry): Promise<AdminServer> => {
        const link = entry.primary.current;
        const tools = link === undefined ? undefined : await link.list('tools').then((list) => list.length, () => undefined);
        return {
          name: entry.name,
          transport: entry.config.transport,
          mode: entry.config.mode,
          isolation: entry.config.isolation,
          state: effectiveState(entry),
          tools,
          restarts: this.restarts.get(entry.name) ?? 0,
          lastError: lastErrorOf(entry.primary.lastError),
        };
      }),
    );
    return {
      gateway: { name: this.options.name, version: this.options.version },
      servers,
      sessions: this.options.sessions(),
      customizations: customizationRows(this.options.customizations),
      lastReload: this.reload,
      ...(this.options.audit === undefined ? {} : { audit: this.options.audit.recent() }),
    };
  }

  close(): void {
    this.stopCounting();
  }
}
