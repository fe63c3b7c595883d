/**
 * `POST <path>/customizations/authenticate` with `{ "id", "token" }`: the caller's session gives
 * the gateway its own token for one server with `upstreamAuth.kind: "perUser"`
 * (docs/authorization.md, "Credentials for upstreams"). The token is held for that session only
 * (upstream/credentials/user-tokens.ts), the session's connection to the server opens afresh with
 * it, and the answer is 200 with the caller's list, where the server is `ready` once the upstream
 * accepted it; the session hears its lists changed.
 *
 * Refusals, in the order they are checked, each through the error taxonomy and none echoing the
 * token: a body that is not that object → 400 (-32602; 415/413/-32700 for the body itself); no
 * `Mcp-Session-Id` → 400; the principal past its own rate (authenticate-budget.ts) → 429
 * `RATE_LIMITED` with `Retry-After`; a session id that is not a live session of the caller → 404;
 * an id the list does not hold or one the caller's access rules hide from it (access-filter.ts)
 * → 404 `UNKNOWN_CUSTOMIZATION`; a server without per-user credentials → 400; the session past its
 * rate for that server → 429; then, as the token is held: the session gone meanwhile → 404, a
 * server the session's enablement or its latest token's access rules hide → 404
 * `UNKNOWN_CUSTOMIZATION` (like an unknown id), one the session does not reach → 400. All of these
 * come before any connection opens (a hidden upstream never judges a token: no 200/502 oracle).
 * Last, the upstream refusing the token → 502 `UPSTREAM_AUTH_REQUIRED` (the token is dropped), or
 * not reachable → 502 (the token is kept for the session's next use).
 */
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import { readJsonRpcBody } from '../inbound/body.js';
import type { AccessProfile } from '../policy/access-policy.js';
import { B64TOKEN, MAX_UPSTREAM_TOKEN_LENGTH } from '../net/bearer-token.js';
import { takesUserTokens, type UserTokens } from '../upstream/credentials/user-tokens.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { listJsonFor, showsId } from './access-filter.js';
import { authenticateBudget, type AuthenticateBudget } from './authenticate-budget.js';
import { configServerOfKey } from './build-list.js';
import { sessionCallerView } from './caller-view.js';
import type { CustomizationList } from './customization-list.js';
import { listResponse } from './list-response.js';
import type { Check } from './toggle-check.js';

/** A token and an id, with room for JSON escapes of the token. */
const BODY_LIMITS = Object.freeze({ maxBytes: 2 * MAX_UPSTREAM_TOKEN_LENGTH + 1024, maxDepth: 2 });
const FIELDS: ReadonlySet<string> = new Set(['id', 'token']);

export interface AuthenticateRequest {
  readonly id: string;
  readonly token: string;
}

/** `{ id, token }` and nothing else; the token a bearer token of at most 16 KiB. Pure; never echoes the token. */
export function parseAuthenticate(body: unknown): Check<AuthenticateRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, message: 'the body must be an object { id, token }' };
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => !FIELDS.has(key));
  if (unknown !== undefined) return { ok: false, message: `unknown field ${JSON.stringify(unknown.slice(0, 64))}; expected id, token` };
  const { id, token } = fields;
  if (typeof id !== 'string' || id.length === 0 || id.length > 64) return { ok: false, message: '"id" must be the id of a listed server' };
  if (typeof token !== 'string' || token.length === 0) return { ok: false, message: '"token" must be a non-empty string' };
  if (token.length > MAX_UPSTREAM_TOKEN_LENGTH) return { ok: false, message: `"token" must be at most ${MAX_UPSTREAM_TOKEN_LENGTH} bytes` };
  if (!B64TOKEN.test(token)) return { ok: false, message: '"token" must be a bearer token (RFC 6750: letters, digits and -._~+/, then any "=")' };
  return { ok: true, value: { id, token } };
}

export interface AuthenticateRouteOptions {
  readonly path: string;
  readonly list: CustomizationList;
  readonly registry: UpstreamRegistry;
  readonly userTokens: UserTokens;
  principalOf(c: Context): string | undefined;
  /** The caller's access profile (absent, or undefined: nothing is hidden from it). */
  accessOf?(c: Context): AccessProfile | undefined;
  /** The route's own rate (default: {@link authenticateBudget}'s fixed one). */
  readonly budget?: AuthenticateBudget;
}

/** What an unknown id, a hidden one and a server the session does not see are all answered with. */
function unknownServer(): Response {
  return errorResponse(new GatewayError('UNKNOWN_CUSTOMIZATION', 'no server with this id is listed'));
}

export function mountAuthenticate(app: Hono, options: AuthenticateRouteOptions): void {
  const { list, registry, userTokens } = options;
  const budget = options.budget ?? authenticateBudget();
  /** The config server an id names, if it names one (whether the caller's list shows it is checked apart). */
  const serverOf = (id: string): string | undefined => {
    const key = list.ids.keyFor(id);
    return key === undefined ? undefined : configServerOfKey(key);
  };

  app.post(options.path, async function authenticateCustomization(c) {
    const body = await readJsonRpcBody(c.req.raw, BODY_LIMITS);
    if (!body.ok) return errorResponse(body.error);
    const parsed = parseAuthenticate(body.value);
    if (!parsed.ok) return errorResponse(new GatewayError('INVALID_PARAMS', parsed.message));
    const { id, token } = parsed.value;
    const sessionId = c.req.header('mcp-session-id');
    if (sessionId === undefined) return errorResponse(new GatewayError('SESSION_ID_REQUIRED', 'a credential is for one session: send its Mcp-Session-Id'));
    const principal = options.principalOf(c);
    const spent = budget.principal(principal);
    if (spent !== undefined) return errorResponse(spent);
    const caller = sessionCallerView(c.req, principal, list.enablement);
    if (caller instanceof GatewayError) return errorResponse(caller);
    const access = options.accessOf?.(c);
    const server = serverOf(id);
    if (server === undefined || !showsId(list.viewFor(caller.viewer()).items, access, id)) return unknownServer();
    const entry = registry.entries.get(server);
    if (entry === undefined || !takesUserTokens(entry.config)) {
      return errorResponse(new GatewayError('INVALID_PARAMS', `server "${server}" does not take a user's own credential (its upstreamAuth is not "perUser")`, { server }));
    }
    const spentHere = budget.sessionServer(principal, sessionId, server);
    if (spentHere !== undefined) return errorResponse(spentHere);
    const outcome = userTokens.set(sessionId, principal, server, token);
    if (outcome === 'unknownSession') return errorResponse(new GatewayError('SESSION_NOT_FOUND', 'Session not found'));
    if (outcome === 'hidden') return unknownServer();
    if (outcome === 'notReached') return errorResponse(new GatewayError('INVALID_PARAMS', `this session does not reach server "${server}" (another endpoint's session, or the server is hidden from it)`, { server }));
    try {
      await userTokens.reconnect(sessionId, server);
    } catch (error) {
      return errorResponse(error);
    }
    return listResponse(listJsonFor(list.freshFor(caller.viewer()), access));
  });
  app.all(options.path, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'a credential is sent with POST')));
}
