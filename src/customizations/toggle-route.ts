/**
 * `POST <path>/customizations/toggle` with `{ "id", "enabled", "scope", "workspace"? }`: sets
 * one enablement decision and answers 200 with the caller's new list (`{ "items": […] }`).
 *
 * Refusals, in this order, each through the error taxonomy: a body that is not that object →
 * 400 (-32602; 415/413/-32700 for the body itself); an `Mcp-Session-Id` that is not a live
 * session of the caller → 404; a scope the caller may not set (toggle-check.ts) → 403, before
 * the id is looked at, so a caller without the right learns nothing of which ids exist; an id
 * the list does not hold, one without enablement (an agent), or one the caller's access rules
 * hide (access-filter.ts) → 404, alike; a workspace decision
 * without a workspace (none named, and the session has none) → 400; the store not writable →
 * 503, nothing changed.
 */
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import { readJsonRpcBody } from '../inbound/body.js';
import type { AccessProfile } from '../policy/access-policy.js';
import { listJsonFor, showsId } from './access-filter.js';
import { sessionCallerView } from './caller-view.js';
import { listResponse } from './list-response.js';
import type { CustomizationList } from './customization-list.js';
import type { ToggleTarget } from './enablement/enablement.js';
import { mayToggle, parseToggle, type TogglePermissions } from './toggle-check.js';

/** A toggle body is a few short fields. */
const BODY_LIMITS = Object.freeze({ maxBytes: 16 * 1024, maxDepth: 4 });

export interface ToggleRouteOptions {
  readonly path: string;
  readonly list: CustomizationList;
  readonly permissions: TogglePermissions;
  principalOf(c: Context): string | undefined;
  /** The caller's access profile (absent, or undefined: nothing is hidden from it). */
  accessOf?(c: Context): AccessProfile | undefined;
}

export function mountToggle(app: Hono, options: ToggleRouteOptions): void {
  const { list, permissions } = options;
  const ids = list.ids;

  app.post(options.path, async function toggleCustomization(c) {
    const enablement = list.enablement;
    if (enablement === undefined) return errorResponse(new GatewayError('NOT_IMPLEMENTED', 'enablement is not configured on this gateway; nothing was changed'));
    const body = await readJsonRpcBody(c.req.raw, BODY_LIMITS);
    if (!body.ok) return errorResponse(body.error);
    const parsed = parseToggle(body.value);
    if (!parsed.ok) return errorResponse(new GatewayError('INVALID_PARAMS', parsed.message));
    const request = parsed.value;
    const principal = options.principalOf(c);
    const caller = sessionCallerView(c.req, principal, enablement);
    if (caller instanceof GatewayError) return errorResponse(caller);
    const allowed = mayToggle(request.scope, { principal, hasSession: caller.session !== undefined }, permissions);
    if (!allowed.ok) return errorResponse(new GatewayError('TOGGLE_FORBIDDEN', allowed.message));
    const key = ids.keyFor(request.id);
    const access = options.accessOf?.(c);
    if (key === undefined || !enablement.has(key) || !showsId(list.viewFor(caller.viewer()).items, access, request.id)) return errorResponse(new GatewayError('UNKNOWN_CUSTOMIZATION', 'no customisation with this id can be toggled'));
    let target: ToggleTarget;
    if (request.scope === 'session') target = { scope: 'session', session: caller.session! };
    else if (request.scope === 'global') target = { scope: 'global' };
    else {
      const workspace = request.workspace ?? caller.session?.workspace;
      if (workspace === undefined) return errorResponse(new GatewayError('INVALID_PARAMS', 'a workspace decision needs "workspace", or a session whose workspace is known'));
      target = { scope: 'workspace', workspace };
    }
    try {
      await enablement.toggle(key, target, request.enabled);
    } catch (error) {
      return errorResponse(error);
    }
    const viewer = caller.session?.viewer() ?? (target.scope === 'workspace' ? { workspace: target.workspace } : {});
    return listResponse(listJsonFor(list.freshFor(viewer), access));
  });
  app.all(options.path, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'a toggle is sent with POST')));
}
