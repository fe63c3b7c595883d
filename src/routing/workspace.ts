/**
 * The workspace a request names, for `isolation: "principal"` servers: a client that works in
 * several projects may keep one upstream connection (and so one upstream state) per project by
 * sending `_meta["portcullis/workspace"]` — on `initialize` for a 2025 session (fixed for the
 * session's life), on each request in the 2026 era. It only splits one principal's connections
 * further; it is never a way to reach another principal's, since the principal comes from
 * authentication and is part of every key.
 */
import { GatewayError } from '../errors.js';

export const WORKSPACE_META_KEY = 'portcullis/workspace';

/** Longest workspace name accepted (it is a map key: bounded). */
export const MAX_WORKSPACE_LENGTH = 256;

export type WorkspaceCheck = { ok: true; workspace: string | undefined } | { ok: false; message: string };

/** A control character (C0, DEL, C1): never part of a name a person chose. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The workspace named in one JSON-RPC message's `params._meta`, if any, checked. Pure. */
export function workspaceOf(message: unknown): WorkspaceCheck {
  const params = (message as { params?: unknown } | null | undefined)?.params;
  const meta = (params as { _meta?: unknown } | null | undefined)?._meta;
  if (meta === null || typeof meta !== 'object' || !Object.hasOwn(meta, WORKSPACE_META_KEY)) return { ok: true, workspace: undefined };
  const value = (meta as Record<string, unknown>)[WORKSPACE_META_KEY];
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_WORKSPACE_LENGTH || CONTROL.test(value)) {
    return { ok: false, message: `_meta["${WORKSPACE_META_KEY}"] must be a string of 1-${MAX_WORKSPACE_LENGTH} characters without control characters` };
  }
  return { ok: true, workspace: value };
}

/** The refusal of a bad workspace: 400 with -32602 through the one error mapping. */
export function workspaceError(message: string): GatewayError {
  return new GatewayError('INVALID_PARAMS', message);
}
