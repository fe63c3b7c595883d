/**
 * Review and approval of held tool definitions (docs/security.md, "Tool integrity"), under each
 * MCP path, behind the same Host/Origin guards and authentication as the MCP endpoint (app.ts
 * mounts them after those), and then `mayDecide`:
 *
 * - `GET <path>/integrity` → `{ "mode", "pending": [ { "id", "server", "tool", "change", "flags",
 *   "hash", "before", "after", "since" } ], "heldServers": [ { "server", "reason" } ] }`;
 * - `POST <path>/integrity/approve` and `POST <path>/integrity/reject` with a JSON body
 *   `{ "id": "…", "hash"?: "…" }` or `{ "ids": ["…", …] }`: approve pins the pending definition
 *   (the tool is listed and callable again, sessions hear `list_changed`); reject keeps it hidden
 *   until its definition changes again. Answers `{ "decided": [ids], "pending": […] }`.
 *
 * Who may: with authentication on, the policy's `admins`; without it, any caller of a loopback
 * listener (as the customisation toggles: whoever reaches it is on the machine), unless the
 * policy says `toolIntegrity.decisionsRequireAuth`. Refusals through the error taxonomy: a body
 * that is not JSON → 415, not that object → 400, not allowed → 403 (`ADMIN_REFUSED`, before any
 * id is looked at), an id not pending → 404, a `hash` no longer the pending definition's → 409
 * (`INTEGRITY_CONFLICT`, the entry shows the newer one), the store not writable → 503.
 */
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import { principalOf } from '../inbound/auth/auth-middleware.js';
import { readJsonRpcBody } from '../inbound/body.js';
import type { ToolIntegrity } from '../integrity/tool-integrity.js';

/** A decision body is a few short fields. */
const BODY_LIMITS = Object.freeze({ maxBytes: 64 * 1024, maxDepth: 4 });
/** Most entries one request decides. */
export const MAX_IDS = 200;

export interface DecisionPermissions {
  readonly authOn: boolean;
  /** The policy's `admins`. */
  readonly admins: ReadonlySet<string>;
  /** Authentication is off and the listener is loopback: every caller is the local operator. */
  readonly openToLocal: boolean;
  /** The policy's `toolIntegrity.decisionsRequireAuth`. */
  readonly requireAuth: boolean;
}

export type Check<T> = { ok: true; value: T } | { ok: false; message: string };

/** May a caller (`principal`, undefined without authentication) see and decide held definitions? Pure. */
export function mayDecide(principal: string | undefined, permissions: DecisionPermissions): Check<true> {
  if (permissions.authOn) {
    if (principal !== undefined && permissions.admins.has(principal)) return { ok: true, value: true };
    return { ok: false, message: "only the policy's admins may review and decide held tool definitions" };
  }
  if (permissions.requireAuth) return { ok: false, message: 'the policy requires authentication for tool-integrity decisions (toolIntegrity.decisionsRequireAuth); turn auth on' };
  if (permissions.openToLocal) return { ok: true, value: true };
  return { ok: false, message: 'without auth, tool-integrity decisions are taken on a loopback listener only' };
}

export interface DecisionRequest {
  readonly ids: readonly string[];
  readonly hash: string | undefined;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const HASH = /^sha256:[0-9a-f]{64}$/;

/** `{ id, hash? }` or `{ ids }`, and nothing else. Pure. */
export function parseDecision(body: unknown): Check<DecisionRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, message: 'the body must be an object { "id", "hash"? } or { "ids" }' };
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => key !== 'id' && key !== 'ids' && key !== 'hash');
  if (unknown !== undefined) return { ok: false, message: `unknown field ${JSON.stringify(unknown.slice(0, 64))}; expected id, hash or ids` };
  const { id, ids, hash } = fields;
  if (hash !== undefined && (typeof hash !== 'string' || !HASH.test(hash))) return { ok: false, message: '"hash" must be a definition hash as listed (sha256:<64 hex>)' };
  if (id !== undefined && ids !== undefined) return { ok: false, message: 'send "id" or "ids", not both' };
  if (id !== undefined) {
    if (typeof id !== 'string' || !ID.test(id)) return { ok: false, message: '"id" must be the id of a pending entry' };
    return { ok: true, value: { ids: [id], hash: hash as string | undefined } };
  }
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_IDS || !ids.every((value) => typeof value === 'string' && ID.test(value))) {
    return { ok: false, message: `"ids" must be 1-${MAX_IDS} ids of pending entries` };
  }
  if (hash !== undefined) return { ok: false, message: '"hash" goes with a single "id"' };
  return { ok: true, value: { ids: [...new Set(ids as string[])], hash: undefined } };
}

export interface IntegrityRoutesOptions {
  /** The MCP endpoint's path ('' for `/`). */
  readonly base: string;
  readonly integrity: ToolIntegrity;
  readonly permissions: DecisionPermissions;
}

const NO_STORE = { 'cache-control': 'no-store' };

export function mountIntegrity(app: Hono, options: IntegrityRoutesOptions): void {
  const path = `${options.base}/integrity`;
  const { integrity, permissions } = options;
  const refused = (c: Context): Response | undefined => {
    const allowed = mayDecide(principalOf(c), permissions);
    return allowed.ok ? undefined : errorResponse(new GatewayError('ADMIN_REFUSED', allowed.message));
  };
  const listing = () => ({ mode: integrity.mode, pending: integrity.pending(), heldServers: integrity.heldServers() });

  app.get(path, (c) => refused(c) ?? Response.json(listing(), { headers: NO_STORE }));
  for (const decision of ['approve', 'reject'] as const) {
    app.post(`${path}/${decision}`, async function decideHeldTool(c) {
      const refusal = refused(c);
      if (refusal !== undefined) return refusal;
      // A JSON body only (415 otherwise): an HTML form cannot send one, so another site cannot decide for an admin's browser.
      const body = await readJsonRpcBody(c.req.raw, BODY_LIMITS);
      if (!body.ok) return errorResponse(body.error);
      const parsed = parseDecision(body.value);
      if (!parsed.ok) return errorResponse(new GatewayError('INVALID_PARAMS', parsed.message));
      const by = principalOf(c) ?? 'local';
      const decided: string[] = [];
      for (const id of parsed.value.ids) {
        try {
          await integrity.decide(id, decision, { hash: parsed.value.hash, by });
          decided.push(id);
        } catch (error) {
          // Earlier ids of the request stay decided; the answer says which failed and why.
          if (decided.length === 0) return errorResponse(error);
          return Response.json({ decided, failed: { id, code: error instanceof GatewayError ? error.code : 'error' }, ...listing() }, { status: 207, headers: NO_STORE });
        }
      }
      return Response.json({ decided, ...listing() }, { headers: NO_STORE });
    });
  }
  for (const route of [path, `${path}/approve`, `${path}/reject`]) {
    app.all(route, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'held tools are listed with GET integrity; decisions are a POST to integrity/approve or integrity/reject')));
  }
}
