/**
 * Enablement decisions and how they resolve (docs/customizations.md, "Enablement"). Pure.
 *
 * Three scopes, most specific first: `session` (one session's own choice), `workspace` (every
 * session whose primary workspace is that URI), `global` (the operator: the config's
 * `enabled: false`, or a stored toggle). A decision is kept only where it differs from what the
 * item would inherit without it — a session inherits its workspace's value, a workspace the
 * global one, the global scope the config's — so setting a value back to the inherited one
 * removes the decision instead of piling up another. Decisions are keyed by durable keys
 * (`config#mcp=<name>`, `plugin:<name>`, `plugin:<name>#mcp=<server>`), never by ids.
 */
import type { CustomizationEnablement } from '../types.js';

export type Scope = 'session' | 'workspace' | 'global';

/** What the state store keeps: global decisions, and each workspace's decisions. */
export interface StoredDecisions {
  readonly global: ReadonlyMap<string, boolean>;
  readonly workspaces: ReadonlyMap<string, ReadonlyMap<string, boolean>>;
}

/** Who is looking: a session's own decisions (if any) and its primary workspace (if known). */
export interface Viewer {
  readonly session?: ReadonlyMap<string, boolean>;
  readonly workspace?: string;
  /** The session's id, for what only it holds (its per-user upstream credentials); never shown. */
  readonly sessionId?: string;
}

/** What the config says of an item: `false` only where it set `enabled: false`. */
export type ConfigDefault = (key: string) => boolean;

export function globalValue(key: string, stored: StoredDecisions, configDefault: ConfigDefault): boolean {
  return stored.global.get(key) ?? configDefault(key);
}

export function workspaceValue(key: string, workspace: string | undefined, stored: StoredDecisions, configDefault: ConfigDefault): boolean {
  const decided = workspace === undefined ? undefined : stored.workspaces.get(workspace)?.get(key);
  return decided ?? globalValue(key, stored, configDefault);
}

/**
 * The item's entries for `viewer`, sorted session, workspace, global (a wire contract), each
 * present only when that scope holds an explicit decision (the config's `enabled: false` is the
 * operator's global decision).
 */
export function entriesFor(key: string, viewer: Viewer, stored: StoredDecisions, configDefault: ConfigDefault): CustomizationEnablement[] {
  const entries: CustomizationEnablement[] = [];
  const session = viewer.session?.get(key);
  if (session !== undefined) entries.push({ kind: 'session', enabled: session });
  const workspace = viewer.workspace === undefined ? undefined : stored.workspaces.get(viewer.workspace)?.get(key);
  if (workspace !== undefined) entries.push({ kind: 'workspace', uri: viewer.workspace!, enabled: workspace });
  const global = stored.global.get(key);
  if (global !== undefined) entries.push({ kind: 'global', enabled: global });
  else if (!configDefault(key)) entries.push({ kind: 'global', enabled: false });
  return entries;
}

/** The contract's rule: the most specific explicit decision wins; none means enabled. */
export function effective(entries: readonly CustomizationEnablement[] | undefined): boolean {
  return entries?.[0]?.enabled ?? true;
}

/** The value an item would have at `scope` if that scope held no decision of its own. */
export function inherited(scope: Scope, key: string, workspace: string | undefined, stored: StoredDecisions, configDefault: ConfigDefault): boolean {
  switch (scope) {
    case 'global':
      return configDefault(key);
    case 'workspace':
      return globalValue(key, stored, configDefault);
    case 'session':
      return workspaceValue(key, workspace, stored, configDefault);
    default: {
      const unreachable: never = scope;
      throw new TypeError(`unknown scope ${String(unreachable)}`);
    }
  }
}

/** What to keep for a toggle: the value, or `undefined` (remove the decision) when it equals the inherited one. */
export function decisionToKeep(enabled: boolean, inheritedValue: boolean): boolean | undefined {
  return enabled === inheritedValue ? undefined : enabled;
}
