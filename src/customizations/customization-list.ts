/**
 * The live customisation list of one gateway: the static sources (config servers, plugins) read
 * once at start (a reload may add a config server, `admitServer`, or withdraw one,
 * `withdrawServer`), joined with what the registry sees of each running server and what
 * enablement decides. Every change of a server's connection state, and every toggle, yields a new version —
 * but only when the list as a sessionless caller sees it really differs, or a decision changed,
 * so a reconnect that lands where it started notifies nobody. Watchers wait for a version after
 * the one they hold and then build their own viewer's list (a session's decisions are in its
 * list only): they send it when it differs from what they sent last, always whole (full
 * replacement), so a slow watcher never makes versions pile up.
 */
import type { UpstreamRegistry } from '../upstream/registry.js';
import { effectiveState } from '../upstream/registry-entry.js';
import type { Viewer } from './enablement/decisions.js';
import type { Enablement } from './enablement/enablement.js';
import { buildCustomizations, type ListSources, type LiveView } from './build-list.js';
import type { ConfigSource } from './config-ranges.js';
import type { IdMinter } from './ids.js';
import { mcpAppOf } from './mcp-app.js';
import { perUserPrimaryState, perUserState, serverState } from './server-state.js';
import type { UserTokens } from '../upstream/credentials/user-tokens.js';
import type { Customization } from './types.js';
import { upstreamIcons } from './upstream-icons.js';

export interface ListSnapshot {
  readonly version: number;
  readonly items: readonly Customization[];
  /** `JSON.stringify({ items })`, computed once per version. */
  readonly json: string;
}

export interface CustomizationListOptions {
  readonly sources: ListSources;
  readonly registry: UpstreamRegistry;
  readonly ids: IdMinter;
  /** Decisions shown as each item's `enablement`; absent: none (every item enabled). */
  readonly enablement?: Enablement;
  /** Sessions' tokens for per-user servers: each session's list shows its own state of them. */
  readonly userTokens?: UserTokens;
}

const NOBODY: Viewer = Object.freeze({});

export class CustomizationList {
  private options: CustomizationListOptions;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly waiters = new Set<() => void>();
  private readonly versionListeners = new Set<() => void>();
  private channelBase: string | undefined;
  private current: ListSnapshot;
  private scheduled = false;
  private bumpPending = false;
  private isClosed = false;

  constructor(options: CustomizationListOptions) {
    this.options = options;
    this.current = this.build(0);
    for (const entry of options.registry.entries.values()) {
      this.unsubscribe.push(entry.primary.onStateChange(() => this.schedule()));
    }
    // A server a reload adds is followed from before its first connection attempt.
    this.unsubscribe.push(options.registry.onServerAdded((entry) => this.unsubscribe.push(entry.primary.onStateChange(() => this.schedule()))));
    // A toggle may change only one session's list: every watcher rebuilds its own and compares.
    if (options.enablement !== undefined) this.unsubscribe.push(options.enablement.onAnyChange(() => this.bump()));
    // So does a session's token or its own connection to a per-user server.
    if (options.userTokens !== undefined) this.unsubscribe.push(options.userTokens.onChange(() => this.schedule(true)));
  }

  /** The ids of the listed items (and their durable keys, never on the wire). */
  get ids(): IdMinter {
    return this.options.ids;
  }

  get enablement(): Enablement | undefined {
    return this.options.enablement;
  }

  /** Where side channels live (`<gateway MCP URL>/servers/`), known once the listener is bound. */
  setChannelBase(mcpUrl: string): void {
    this.channelBase = `${mcpUrl}/servers/`;
    this.refresh();
  }

  /**
   * A reload added config server `name` (or named again one it withdrew): it joins the list, last
   * of the config's servers, with the ranges of `source` (the config file read again: entries moved).
   */
  admitServer(name: string, source: ConfigSource): void {
    const { sources } = this.options;
    const configServers = sources.configServers.includes(name) ? sources.configServers : [...sources.configServers, name];
    this.options = { ...this.options, sources: { ...sources, config: source, configServers } };
    this.refresh();
  }

  /** A reload removed config server `name`: it leaves the list (a new version). */
  withdrawServer(name: string): void {
    const { sources } = this.options;
    if (!sources.configServers.includes(name)) return;
    this.options = { ...this.options, sources: { ...sources, configServers: sources.configServers.filter((server) => server !== name) } };
    this.refresh();
  }

  /** The configured servers it lists, in config order. */
  get configServers(): readonly string[] {
    return this.options.sources.configServers;
  }

  /** The opaque id of a durable key, minted like every id of this list (session-plugin.ts). */
  idFor(key: string): string {
    return this.options.ids.idFor(key);
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The list as a sessionless caller with no workspace sees it. */
  snapshot(): ListSnapshot {
    return this.current;
  }

  /** The list as `viewer` sees it (its session's decisions, its workspace's), at the current version. */
  viewFor(viewer: Viewer | undefined): ListSnapshot {
    if (viewer === undefined || (viewer.session === undefined && viewer.workspace === undefined)) return this.current;
    return this.build(this.current.version, viewer);
  }

  /**
   * Resolves with the latest snapshot once its version is past `version`, or with undefined when
   * the list closes or `signal` aborts first.
   */
  async after(version: number, signal: AbortSignal): Promise<ListSnapshot | undefined> {
    while (!this.isClosed && !signal.aborted && this.current.version <= version) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
    return this.isClosed || signal.aborted ? undefined : this.current;
  }

  close(): void {
    this.isClosed = true;
    for (const stop of this.unsubscribe.splice(0)) stop();
    this.wakeAll();
  }

  /**
   * State changes come in bursts (connecting, ready; a session's token set, connecting, ready):
   * one rebuild per turn of the event loop. `bump`: a new version even when the sessionless list
   * is the same (a per-user change shows in a session's list only); one bump in the turn wins.
   */
  private schedule(bump = false): void {
    if (this.isClosed) return;
    this.bumpPending ||= bump;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const bumped = this.bumpPending;
      this.bumpPending = false;
      if (bumped) this.bump();
      else this.refresh();
    });
  }

  private refresh(): void {
    if (this.isClosed) return;
    const next = this.build(this.current.version + 1);
    if (next.json === this.current.json) return;
    this.current = next;
    this.wakeAll();
  }

  /** The list as `viewer` sees it, built from the live state now (the answer to a toggle). */
  freshFor(viewer: Viewer): ListSnapshot {
    return this.build(this.current.version, viewer);
  }

  /** A decision changed: a new version even when the sessionless list is the same (a session's may not be). */
  private bump(): void {
    if (this.isClosed) return;
    this.current = this.build(this.current.version + 1);
    this.wakeAll();
  }

  private wakeAll(): void {
    for (const wake of [...this.waiters]) wake();
    for (const listener of [...this.versionListeners]) listener();
  }

  /** Called after every new version (the list, or some viewer's, may have changed). */
  onVersion(listener: () => void): () => void {
    this.versionListeners.add(listener);
    return () => this.versionListeners.delete(listener);
  }

  private build(version: number, viewer: Viewer = NOBODY): ListSnapshot {
    const { registry, sources, ids, enablement, userTokens } = this.options;
    const session = viewer.sessionId;
    const view: LiveView = {
      stateOf: (server) => {
        const entry = registry.entries.get(server);
        if (entry === undefined) return { kind: 'stopped' };
        // The state `/readyz` reports too (registry-entry.ts); an authorization challenge's details come from the primary.
        const state = effectiveState(entry);
        const primary =
          state === 'authRequired' ? perUserPrimaryState(server, entry.primary.state, entry.primary.lastError) : serverState(server, state, entry.primary.lastError);
        const own = session === undefined || primary.kind === 'stopped' ? undefined : userTokens?.view(session, server);
        return own === undefined ? primary : perUserState(server, own, primary);
      },
      iconsOf: (server) => upstreamIcons(registry.entries.get(server)?.primary.current?.serverInfo),
      channelOf: (server) => `${this.channelBase ?? '/servers/'}${encodeURIComponent(server)}`,
      enablementOf: (key) => enablement?.entries(key, viewer) ?? [],
      appOf: (server) => mcpAppOf(registry.entries.get(server)?.primary.current?.capabilities),
    };
    const items = buildCustomizations(sources, view, ids);
    return { version, items, json: JSON.stringify({ items }) };
  }
}
