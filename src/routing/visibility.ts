/**
 * Which servers a caller sees, as enablement decides it (the customisation list's scopes:
 * docs/customizations.md, "Enablement"). Routing only asks; the decisions live with the
 * customisations. A server a caller does not see is left out of that caller's merged lists, so a
 * call, read or get naming it is answered exactly like an unknown name.
 */

/** One 2025 session's view: its own decisions and its primary workspace. */
export interface SessionEnablement {
  /** The session's primary workspace, once known. */
  readonly workspace: string | undefined;
  /** Learnt later (the first root a client reports through `roots/list`); undefined forgets it. */
  setWorkspace(uri: string | undefined): void;
  /** `servers` (same order) minus those this session does not see. */
  visible(servers: readonly string[]): readonly string[];
  /** Called when the set of servers this session sees changes, whatever scope changed it. */
  onChange(listener: () => void): () => void;
  /** The session ended: its decisions go with it. Idempotent. */
  detach(): void;
}

export interface ServerVisibility {
  /** The view of one session, held until `detach`; `principal` and `id` say whose it is. */
  attach(session: { readonly id: string; readonly principal: string | undefined; readonly workspace?: string }): SessionEnablement;
  /** What a sessionless (2026) request sees, in `workspace` when it names one. */
  visible(servers: readonly string[], workspace?: string): readonly string[];
  /** Called after a global or workspace decision changed (what sessionless callers see may differ). */
  onChange(listener: () => void): () => void;
  /** True once some workspace holds a decision: only then is a session's workspace worth asking its client for. */
  workspacesInUse(): boolean;
}
