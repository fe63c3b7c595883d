/**
 * The pure checks of an enablement toggle (`POST <path>/customizations/toggle`): the body's shape,
 * and whether the caller may set the scope it names (docs/customizations.md, "Who may toggle"):
 *
 * - `session`: a session, its own decisions only (it must send its `Mcp-Session-Id`);
 * - `workspace`, `global`: only principals the policy lists in `admins`, or any caller when
 *   authentication is off and the listener is loopback (everyone who can reach it is local).
 */
import type { Scope } from './enablement/decisions.js';
import { MAX_ROOT_URI_LENGTH } from '../routing/roots-workspace.js';

export interface ToggleRequest {
  readonly id: string;
  readonly enabled: boolean;
  readonly scope: Scope;
  readonly workspace?: string;
}

export type Check<T> = { ok: true; value: T } | { ok: false; message: string };

const SCOPES: ReadonlySet<string> = new Set(['session', 'workspace', 'global']);
const FIELDS: ReadonlySet<string> = new Set(['id', 'enabled', 'scope', 'workspace']);
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A workspace URI a caller may name: bounded, no control characters. */
export function checkWorkspace(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ROOT_URI_LENGTH && !CONTROL.test(value);
}

/** `{ id, enabled, scope, workspace? }` and nothing else. Pure. */
export function parseToggle(body: unknown): Check<ToggleRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, message: 'the body must be an object { id, enabled, scope, workspace? }' };
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) return { ok: false, message: `unknown field ${JSON.stringify(unknown.slice(0, 64))}; expected id, enabled, scope, workspace` };
  const { id, enabled, scope, workspace } = fields;
  if (typeof id !== 'string' || id.length === 0 || id.length > 64) return { ok: false, message: '"id" must be the id of a listed customisation' };
  if (typeof enabled !== 'boolean') return { ok: false, message: '"enabled" must be true or false' };
  if (typeof scope !== 'string' || !SCOPES.has(scope)) return { ok: false, message: '"scope" must be "session", "workspace" or "global"' };
  if (workspace !== undefined && scope !== 'workspace') return { ok: false, message: '"workspace" is only for scope "workspace"' };
  if (workspace !== undefined && !checkWorkspace(workspace)) return { ok: false, message: `"workspace" must be a URI of 1-${MAX_ROOT_URI_LENGTH} characters without control characters` };
  return { ok: true, value: { id, enabled, scope: scope as Scope, ...(workspace === undefined ? {} : { workspace }) } };
}

export interface TogglePermissions {
  /** The policy's `admins`: principals that may set workspace and global decisions. */
  readonly admins: ReadonlySet<string>;
  /** Authentication is off and the listener is loopback: every caller is the local operator. */
  readonly openToLocal: boolean;
}

export interface ToggleCaller {
  readonly principal: string | undefined;
  /** The caller named a live session of its own. */
  readonly hasSession: boolean;
}

/** May `caller` set a decision of `scope`? Pure. */
export function mayToggle(scope: Scope, caller: ToggleCaller, permissions: TogglePermissions): Check<true> {
  if (scope === 'session') {
    return caller.hasSession ? { ok: true, value: true } : { ok: false, message: 'a session decision needs the Mcp-Session-Id of the session it is for' };
  }
  if (permissions.openToLocal) return { ok: true, value: true };
  if (caller.principal !== undefined && permissions.admins.has(caller.principal)) return { ok: true, value: true };
  return { ok: false, message: `only the policy's admins may set ${scope} decisions` };
}
