/**
 * The live enablement of one gateway: every item that can be enabled or disabled (configured
 * servers, plugins, plugin servers), the stored global and workspace decisions, and each
 * attached session's own decisions. It answers two questions — the entries an item shows a
 * viewer (decisions.ts), and which servers a viewer sees (routing/visibility.ts) — and applies
 * toggles one at a time, storing only what differs from the inherited value.
 *
 * A server is seen when its own effective value and its plugin's are both true: a disabled
 * plugin disables everything in it. Session decisions live only as long as their session and
 * are never shown to anyone else; sessions are bounded by the gateway's session cap, and a
 * session's decisions by the number of items.
 */
import { GatewayError } from '../../errors.js';
import type { ServerVisibility, SessionEnablement } from '../../routing/visibility.js';
import type { CustomizationEnablement } from '../types.js';
import { decisionToKeep, effective, entriesFor, inherited, type Scope, type StoredDecisions, type Viewer } from './decisions.js';
import { MAX_STORED_WORKSPACES, type EnablementStore } from './store.js';

/** One thing enablement decides about. */
export interface EnablementItem {
  readonly key: string;
  /** The upstream server it runs as (registry name); absent for a plugin, or a server not run. */
  readonly server?: string;
  /** The durable key of the plugin that holds it. */
  readonly container?: string;
  /** `false` where the config says `enabled: false`. */
  readonly configEnabled: boolean;
}

export type ToggleTarget =
  | { readonly scope: 'session'; readonly session: SessionRecord }
  | { readonly scope: 'workspace'; readonly workspace: string }
  | { readonly scope: 'global' };

export class SessionRecord implements SessionEnablement {
  readonly id: string;
  readonly principal: string | undefined;
  readonly decisions = new Map<string, boolean>();
  private currentWorkspace: string | undefined;
  private readonly listeners = new Set<() => void>();
  private signature = '';
  private readonly owner: Enablement;

  constructor(owner: Enablement, id: string, principal: string | undefined, workspace: string | undefined) {
    this.owner = owner;
    this.id = id;
    this.principal = principal;
    this.currentWorkspace = workspace;
    this.signature = owner.hiddenSignature(this.viewer());
  }

  get workspace(): string | undefined {
    return this.currentWorkspace;
  }

  viewer(): Viewer {
    const own = { session: this.decisions, sessionId: this.id };
    return this.currentWorkspace === undefined ? own : { ...own, workspace: this.currentWorkspace };
  }

  setWorkspace(uri: string | undefined): void {
    if (uri === this.currentWorkspace) return;
    this.currentWorkspace = uri;
    this.owner.changed(false);
  }

  visible(servers: readonly string[]): readonly string[] {
    return this.owner.visibleTo(servers, this.viewer());
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  detach(): void {
    this.listeners.clear();
    this.owner.forget(this);
  }

  /** Tells this session's listeners when what it sees changed since last time. */
  recheck(): void {
    const next = this.owner.hiddenSignature(this.viewer());
    if (next === this.signature) return;
    this.signature = next;
    for (const listener of [...this.listeners]) listener();
  }
}

export interface EnablementOptions {
  readonly items: readonly EnablementItem[];
  readonly store: EnablementStore;
  /** What the store held at start (the store keeps it current). */
  readonly stored: StoredDecisions;
}

export class Enablement implements ServerVisibility {
  private readonly items = new Map<string, EnablementItem>();
  private readonly byServer = new Map<string, EnablementItem>();
  private readonly store: EnablementStore;
  private readonly stored: StoredDecisions;
  private readonly sessions = new Map<string, SessionRecord>();
  /** Servers a reload removed: no viewer sees them, whatever the decisions say. */
  private readonly withdrawn = new Set<string>();
  private readonly sharedListeners = new Set<() => void>();
  private readonly anyListeners = new Set<() => void>();
  private toggling: Promise<unknown> = Promise.resolve();
  /** What a global decision does to running servers (global-effects.ts); awaited by the toggle. */
  private globalEffect: (() => Promise<void>) | undefined;
  private readonly configDefault = (key: string) => this.items.get(key)?.configEnabled ?? true;

  constructor(options: EnablementOptions) {
    for (const item of options.items) {
      this.items.set(item.key, item);
      if (item.server !== undefined) this.byServer.set(item.server, item);
    }
    this.store = options.store;
    this.stored = options.stored;
  }

  /** Sets what a changed global decision does (stopping and starting servers); a toggle waits for it. */
  setGlobalEffect(effect: () => Promise<void>): void {
    this.globalEffect = effect;
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  attach(session: { readonly id: string; readonly principal: string | undefined; readonly workspace?: string }): SessionRecord {
    const record = new SessionRecord(this, session.id, session.principal, session.workspace);
    this.sessions.set(session.id, record);
    return record;
  }

  /** The attached session `id` when it belongs to `principal`; another principal's is not found. */
  session(id: string, principal: string | undefined): SessionRecord | undefined {
    const record = this.sessions.get(id);
    return record !== undefined && record.principal === principal ? record : undefined;
  }

  forget(record: SessionRecord): void {
    if (this.sessions.get(record.id) === record) this.sessions.delete(record.id);
  }

  visible(servers: readonly string[], workspace?: string): readonly string[] {
    return this.visibleTo(servers, workspace === undefined ? {} : { workspace });
  }

  onChange(listener: () => void): () => void {
    this.sharedListeners.add(listener);
    return () => this.sharedListeners.delete(listener);
  }

  workspacesInUse(): boolean {
    return this.stored.workspaces.size > 0;
  }

  /** Called after every change, of any scope (the customisation list rebuilds). */
  onAnyChange(listener: () => void): () => void {
    this.anyListeners.add(listener);
    return () => this.anyListeners.delete(listener);
  }

  entries(key: string, viewer: Viewer): CustomizationEnablement[] {
    return entriesFor(key, viewer, this.stored, this.configDefault);
  }

  /** The item's own effective value and its container's, for `viewer`. */
  enabled(key: string, viewer: Viewer): boolean {
    const item = this.items.get(key);
    if (item === undefined) return true;
    if (item.container !== undefined && !effective(this.entries(item.container, viewer))) return false;
    return effective(this.entries(key, viewer));
  }

  /**
   * A reload removed `server`: from now on no viewer sees it, so every session whose view it
   * leaves hears `list_changed`, then sessionless listeners and the customisation list do.
   */
  withdraw(server: string): void {
    if (this.withdrawn.has(server)) return;
    this.withdrawn.add(server);
    this.changed(true);
  }

  /**
   * A reload adds `item`'s server (or names again one it removed): the item is decided as at
   * start, its config `enabled` the default under every stored decision. A server it withdrew
   * stays unseen until `reinstate`. Returns whether the operator's decisions let the server run
   * (a globally disabled one is added stopped).
   */
  admit(item: EnablementItem): boolean {
    this.items.set(item.key, item);
    if (item.server !== undefined) this.byServer.set(item.server, item);
    return this.enabled(item.key, {});
  }

  /**
   * A server a reload withdrew and a later one named again is up: viewers see it again, so every
   * session whose view it enters hears `list_changed`, then sessionless listeners and the list do.
   */
  reinstate(server: string): void {
    if (!this.withdrawn.delete(server)) return;
    this.changed(true);
  }

  /** Whether the operator's decisions (config and global toggles) let `server` run. */
  globallyEnabled(server: string): boolean {
    if (this.withdrawn.has(server)) return false;
    const item = this.byServer.get(server);
    return item === undefined || this.enabled(item.key, {});
  }

  /**
   * A server is seen when the viewer's decisions enable it and the global ones let it run: one
   * disabled globally is stopped, so a session or workspace decision enabling it shows in its
   * entries (the user's intent) but cannot make a stopped server serve.
   */
  visibleTo(servers: readonly string[], viewer: Viewer): readonly string[] {
    const shown = servers.filter((server) => {
      if (this.withdrawn.has(server)) return false;
      const item = this.byServer.get(server);
      return item === undefined || (this.enabled(item.key, viewer) && this.enabled(item.key, {}));
    });
    return shown.length === servers.length ? servers : shown;
  }

  /** The servers `viewer` does not see, as one string (compared to notice a change). */
  hiddenSignature(viewer: Viewer): string {
    const hidden = [...this.withdrawn];
    for (const [server, item] of this.byServer) if (!this.withdrawn.has(server) && (!this.enabled(item.key, viewer) || !this.enabled(item.key, {}))) hidden.push(server);
    return hidden.join('\n');
  }

  /** Applies one toggle (after any still being applied); rejects with a `GatewayError` when it cannot. */
  toggle(key: string, target: ToggleTarget, enabled: boolean): Promise<void> {
    const next = this.toggling.then(() => this.apply(key, target, enabled));
    this.toggling = next.catch(() => undefined);
    return next;
  }

  private async apply(key: string, target: ToggleTarget, enabled: boolean): Promise<void> {
    if (!this.items.has(key)) throw new GatewayError('UNKNOWN_CUSTOMIZATION', 'no customisation has this id');
    const scope: Scope = target.scope;
    const workspace = target.scope === 'workspace' ? target.workspace : target.scope === 'session' ? target.session.workspace : undefined;
    const keep = decisionToKeep(enabled, inherited(scope, key, workspace, this.stored, this.configDefault));
    switch (target.scope) {
      case 'session':
        if (keep === undefined) target.session.decisions.delete(key);
        else target.session.decisions.set(key, keep);
        this.changed(false);
        return;
      case 'workspace':
        if (keep !== undefined && !this.stored.workspaces.has(target.workspace) && this.stored.workspaces.size >= MAX_STORED_WORKSPACES) {
          throw new GatewayError('ENABLEMENT_LIMIT', `decisions are stored for ${MAX_STORED_WORKSPACES} workspaces already; clear some first`);
        }
        await this.store.write({ scope: 'workspace', workspace: target.workspace }, key, keep);
        this.changed(true);
        return;
      case 'global':
        await this.store.write({ scope: 'global' }, key, keep);
        this.changed(true);
        await this.globalEffect?.();
        return;
      default: {
        const unreachable: never = target;
        throw new TypeError(`unknown scope ${String(unreachable)}`);
      }
    }
  }

  /** Something changed: sessions whose view moved hear it, then sessionless callers, then the list. */
  changed(shared: boolean): void {
    for (const record of [...this.sessions.values()]) record.recheck();
    if (shared) for (const listener of [...this.sharedListeners]) listener();
    for (const listener of [...this.anyListeners]) listener();
  }
}
