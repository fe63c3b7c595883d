/**
 * The Hono adapter for inbound authentication: run the compiled authenticator on the request's
 * Authorization header lines and either set the `principal` variable or answer 401.
 *
 * Header lines are judged as received: under @hono/node-server, `c.env.incoming.rawHeaders`
 * shows a repeated Authorization as two lines (Node's parsed headers would join them); elsewhere
 * (`app.request()` in tests) the Fetch headers are used, where a repeat arrives joined as "a, b",
 * which the bearer grammar refuses as well.
 *
 * A 401 carries `WWW-Authenticate` (RFC 6750 §3, MCP 2025-11-25 Authorization) and a JSON-RPC
 * error body without an id (the body was never read). The request is passed on untouched; code
 * that hands the request further (the MCP SDK transport) should take `stripAuthorization(…)` of
 * it, so the client's credential is never seen below this layer or forwarded upstream
 * (docs/decisions.md, "Headers upstream").
 */
import type { Context, MiddlewareHandler } from 'hono';
import { refusal } from '../../errors.js';
import type { AuthFailureCode, Authenticator, AuthTarget } from './authenticate.js';
import { headerLines } from '../header-lines.js';
import { readBearerToken } from './authorization-header.js';
import type { AccessProfile, CompiledAccess } from '../../policy/access-policy.js';
import type { Caller } from '../entrance.js';

declare module 'hono' {
  interface ContextVariableMap {
    /** The authenticated principal, set by `authMiddleware` (absent when auth is off). */
    principal: string;
    /** The verified token's claims and scopes (`jwt`, `oauth`), set by `authMiddleware`. */
    principalClaims: Readonly<Record<string, unknown>>;
    principalScopes: readonly string[];
    /** What the policy's access rules let this caller see, set by `accessMiddleware`. */
    access: AccessProfile;
    /** A forwarded request's access profile key, as the proof of the replica that saw the token states it. */
    forwardedAccess: string;
    /** Set when the request came from a peer replica with a valid principal proof. */
    forwarded: true;
  }
}

const AUTHORIZATION: ReadonlySet<string> = new Set(['authorization']);

/** Every Authorization line of the request, one entry per line where the raw lines are known. */
export function authorizationLines(c: Context): string[] {
  return headerLines(c, AUTHORIZATION);
}

export interface AuthMiddlewareOptions {
  /** The protected resource a request addresses (required by the `oauth` kind). */
  targetOf?: (c: Context) => AuthTarget;
  /**
   * The principal a request forwarded by a peer replica proves (cluster/principal-proof.ts), or
   * undefined when the request does not claim to be forwarded: such a request carries no client
   * credential, only the proof.
   */
  forwarded?: (request: Request) => { ok: true; principal: string | undefined; access?: string } | { ok: false; reason: string } | undefined;
  onFailure?: (code: AuthFailureCode | 'AUTH_QUERY_TOKEN' | 'AUTH_FORWARD_PROOF') => void;
  /**
   * Runs the rest of each request it authenticated with a verified token (`next`), given that
   * token and its claims: where `upstreamAuth` `tokenExchange` learns the subject token of the
   * request being served (upstream/credentials/subject-tokens.ts, an async context around
   * `next`); `token` undefined for a request a peer replica forwarded, which carries none.
   * Absent: the token is forgotten with the request, as it should be unless exchanged.
   */
  withVerifiedToken?: (principal: string, token: string | undefined, claims: Readonly<Record<string, unknown>>, next: () => Promise<void>) => Promise<void>;
}

/**
 * Refuse unauthenticated requests with 401 (403 for a token lacking a scope); on success set
 * `c.var.principal` and continue. The authenticator is compiled beforehand
 * (`compileAuthenticator`), so bad config fails at boot.
 *
 * A token in the query string (`?access_token=`, RFC 6750 §2.3) is refused whatever the header
 * says: the MCP authorization spec forbids it, since URLs end up in logs and browser history.
 */
export function authMiddleware(authenticator: Authenticator, options: AuthMiddlewareOptions = {}): MiddlewareHandler {
  const { targetOf, onFailure, forwarded, withVerifiedToken } = options;
  return async function authMiddleware(c, next) {
    if (new URL(c.req.url).searchParams.has('access_token')) {
      onFailure?.('AUTH_QUERY_TOKEN');
      return refusal('INVALID_REQUEST', 'access tokens in the query string are refused; send them in the Authorization header');
    }
    const proved = forwarded?.(c.req.raw);
    if (proved !== undefined) {
      if (!proved.ok || proved.principal === undefined) {
        onFailure?.('AUTH_FORWARD_PROOF');
        return refusal('FORWARD_REFUSED', 'forwarded request refused: no valid principal proof');
      }
      c.set('principal', proved.principal);
      c.set('forwarded', true);
      if (proved.access !== undefined) c.set('forwardedAccess', proved.access);
      // No client credential came with it: no token of the caller is its subject (not another of theirs).
      if (withVerifiedToken !== undefined) await withVerifiedToken(proved.principal, undefined, {}, next);
      else await next();
      return;
    }
    const result = await authenticator.authenticate(authorizationLines(c), targetOf?.(c));
    if (!result.ok) {
      onFailure?.(result.code);
      const code = result.status === 403 ? 'INSUFFICIENT_SCOPE' : result.status === 400 ? 'INVALID_REQUEST' : 'UNAUTHENTICATED';
      return refusal(code, result.message, { headers: { 'www-authenticate': result.wwwAuthenticate } });
    }
    c.set('principal', result.principal);
    if (result.claims !== undefined) c.set('principalClaims', result.claims);
    if (result.scopes !== undefined) c.set('principalScopes', result.scopes);
    if (withVerifiedToken !== undefined && result.claims !== undefined) {
      // Only a verified JWT (claims): the very bearer the authenticator just accepted.
      const read = readBearerToken(authorizationLines(c));
      if (read.ok) {
        await withVerifiedToken(result.principal, read.token, result.claims, next);
        return;
      }
    }
    await next();
  };
}

/**
 * Sets `c.var.access`, the caller's profile under the policy's access rules, from what
 * authentication established (nothing, without it: the rules that match everyone apply).
 *
 * A request a peer replica forwarded carries no token, only the principal proof naming the
 * profile the token matched there; a proof naming none this policy made (a replica with other
 * rules) is refused rather than judged by the principal's name alone, which could match rules the
 * token's claims do not.
 */
export function accessMiddleware(access: CompiledAccess): MiddlewareHandler {
  return async function accessMiddleware(c, next) {
    if (c.get('forwarded') === true) {
      const key: unknown = c.get('forwardedAccess');
      const profile = typeof key === 'string' ? access.profileOfKey(key) : undefined;
      if (profile === undefined) {
        return refusal('FORWARD_REFUSED', 'forwarded request refused: the forwarding replica named no access profile of these rules; replicas must run the same policy');
      }
      c.set('access', profile);
      await next();
      return;
    }
    const claims: unknown = c.get('principalClaims');
    const scopes: unknown = c.get('principalScopes');
    c.set(
      'access',
      access.profileFor({
        principal: principalOf(c),
        claims: typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined,
        scopes: Array.isArray(scopes) ? (scopes as string[]) : undefined,
      }),
    );
    await next();
  };
}

/** The caller's access profile (`accessMiddleware`), or undefined when the policy hides nothing from anyone. */
export function accessOf(c: Context): AccessProfile | undefined {
  const access: unknown = c.get('access');
  return typeof access === 'object' && access !== null ? (access as AccessProfile) : undefined;
}

/**
 * Who is asking (entrance.ts): the principal, its access profile, and whether a peer replica
 * forwarded the request with a valid proof of that principal.
 */
export function callerOf(c: Context): Caller {
  const principal = principalOf(c);
  const access = accessOf(c);
  return c.get('forwarded') === true ? { principal, access, forwarded: true } : { principal, access };
}

/** The principal `authMiddleware` set, or undefined when authentication is not configured. */
export function principalOf(c: Context): string | undefined {
  const principal: unknown = c.get('principal');
  return typeof principal === 'string' ? principal : undefined;
}

/** Methods `new Request` refuses outright (Fetch "forbidden methods"). */
const FORBIDDEN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * A copy of `request` without its Authorization header (method, URL, body and signal kept; the
 * body is moved, not duplicated, so the original's body must not be read afterwards), or `request`
 * itself when it carries none. Hand this, not the original, to anything below the edge.
 *
 * `bodyReadElsewhere`: the caller reads the body from the Node request (`incoming-body.ts`), so
 * the copy carries no body and its `signal` is the original's, looked up only when asked for.
 * Under @hono/node-server, moving the body or reading the signal is what builds the full WHATWG
 * Request (a `ReadableStream` over the socket): a copy that did so on every authenticated call
 * would pay for it, and its stream would compete with the direct reader for the same bytes.
 */
export function stripAuthorization(request: Request, bodyReadElsewhere = false): Request {
  if (!request.headers.has('authorization')) return request;
  const headers = new Headers(request.headers);
  headers.delete('authorization');
  if (!bodyReadElsewhere || FORBIDDEN_METHODS.has(request.method)) return new Request(request, { headers });
  const copy = new Request(request.url, { method: request.method, headers });
  Object.defineProperty(copy, 'signal', { get: () => request.signal, enumerable: true, configurable: true });
  return copy;
}
