/**
 * What enablement means for one 2025 session's scope (visibility.ts): the session's attached
 * decisions, which servers it sees now, `list_changed` to the session whenever that set changes,
 * and its primary workspace learnt from its client's roots (roots-workspace.ts) unless its
 * `initialize` named one. Detached when the session closes.
 */
import { notifyListsChanged, type DownstreamSink } from '../../rpc/sink.js';
import type { ServerRoster } from '../../upstream/server-roster.js';
import { learnWorkspaceFromRoots } from '../roots-workspace.js';
import type { ServerVisibility, SessionEnablement } from '../visibility.js';

/** The same servers in the same order (lists from `visible` are the input itself when nothing is hidden). */
export function sameServers(a: readonly string[], b: readonly string[]): boolean {
  return a === b || (a.length === b.length && a.every((server, i) => server === b[i]));
}


export interface SessionVisibilityOptions {
  readonly visibility: ServerVisibility | undefined;
  /** The endpoint's servers, in merge order (read on every call: a reload may add one). */
  readonly servers: ServerRoster;
  readonly sessionId: string | undefined;
  readonly principal: string | undefined;
  /** The workspace `initialize` named: it wins over any root the client reports. */
  readonly namedWorkspace: string | undefined;
  /** The session's standalone stream (its lists' changes, and the gateway's own `roots/list`). */
  readonly owner: DownstreamSink;
}

export class SessionVisibility {
  /** This session's enablement; absent when enablement is off (or the scope has no session id). */
  readonly enablement: SessionEnablement | undefined;
  private readonly options: SessionVisibilityOptions;
  private readonly unsubscribes: Array<() => void> = [];
  private standaloneOpen = false;
  private rootsAsked = false;

  constructor(options: SessionVisibilityOptions) {
    this.options = options;
    const { visibility, sessionId, principal, namedWorkspace, owner } = options;
    this.enablement =
      visibility === undefined || sessionId === undefined
        ? undefined
        : visibility.attach({ id: sessionId, principal, ...(namedWorkspace === undefined ? {} : { workspace: namedWorkspace }) });
    if (this.enablement === undefined || visibility === undefined) return;
    // What this session sees changed (its own toggle, its workspace's, a global one): its lists did.
    this.unsubscribes.push(
      this.enablement.onChange(() => {
        notifyListsChanged(owner);
      }),
      // The first workspace decision makes this session's workspace worth knowing.
      visibility.onChange(() => this.learnWorkspace()),
    );
  }

  /** The servers this session sees now, in merge order. */
  visibleServers(): readonly string[] {
    const servers = this.options.servers.names;
    const visibility = this.options.visibility;
    return this.enablement?.visible(servers) ?? visibility?.visible(servers) ?? servers;
  }

  /** True while the session sees exactly what a sessionless caller sees (the endpoint's shared lists serve it). */
  seesShared(): boolean {
    if (this.enablement === undefined) return true;
    const servers = this.options.servers.names;
    const visibility = this.options.visibility;
    return sameServers(this.visibleServers(), visibility?.visible(servers) ?? servers);
  }

  /** The session's standalone stream is open: a request of the gateway's own can reach the client now. */
  streamOpened(): void {
    this.standaloneOpen = true;
    this.learnWorkspace();
  }

  /** The client said its roots changed (`notifications/roots/list_changed`): ask again. */
  rootsChanged(): void {
    this.learnWorkspace(true);
  }

  close(): void {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.enablement?.detach();
  }

  /**
   * Asks the client for its roots — only a client that declared `roots`, once its standalone
   * stream is open and some workspace holds a decision (a client is not asked for what nothing
   * would use), once, or `again` when its roots changed.
   */
  private learnWorkspace(again = false): void {
    const enablement = this.enablement;
    if (enablement === undefined || this.options.namedWorkspace !== undefined || !this.standaloneOpen) return;
    if ((this.rootsAsked && !again) || this.options.visibility?.workspacesInUse() !== true) return;
    this.rootsAsked = true;
    void learnWorkspaceFromRoots(this.options.owner).then((answer) => {
      if (answer.known) enablement.setWorkspace(answer.uri);
    });
  }
}
