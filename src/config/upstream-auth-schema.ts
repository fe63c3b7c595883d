/**
 * A remote server's `upstreamAuth` block — how the gateway authenticates to an HTTP upstream
 * beyond static headers (docs/authorization.md, "Credentials for upstreams") — and the checks it
 * needs of the rest of the config (its server entry's headers and isolation, the inbound auth),
 * run by the gateway schema's cross-field refinement (schema.ts).
 */
import { z } from 'zod';

/**
 * How the gateway authenticates to an HTTP upstream beyond `headers`/`envHeaders` (which are the
 * `static` mode). `clientCredentials`: the gateway's own OAuth client for that upstream (RFC 6749
 * §4.4 with the upstream as RFC 8707 `resource`); `tokenExchange`: per principal (below);
 * `perUser`: each 2025 session sends its own token for the upstream (`POST
 * <path>/customizations/authenticate`), carried by that session's own connection only. The
 * client's own token for the gateway is never forwarded.
 */
export const upstreamAuthSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('clientCredentials'),
    /** The authorization server's token endpoint; `https:`, or loopback/private with `allowPrivateNetwork`. */
    tokenUrl: z.string().min(1),
    clientId: z.string().min(1).max(512),
    /** Environment variable holding the client secret, read when a token is fetched. */
    clientSecretEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
    scope: z.string().min(1).max(2048).optional(),
    /** The resource asked for; default the server's `url`. */
    resource: z.string().url().optional(),
    allowPrivateNetwork: z.boolean().default(false),
  }),
  /**
   * `tokenExchange`: each principal's own token for the upstream, exchanged at the authorization
   * server for the principal's inbound token (RFC 8693; upstream/credentials/token-exchange.ts).
   * Needs `isolation: "principal"` and inbound `oauth` or `jwt` auth (checkTokenExchange).
   */
  z.strictObject({
    kind: z.literal('tokenExchange'),
    /** The authorization server's token endpoint; `https:`, or loopback/private with `allowPrivateNetwork`. */
    tokenUrl: z.string().min(1),
    /** The gateway's own client at that server, which performs the exchange. */
    clientId: z.string().min(1).max(512),
    /** Environment variable holding the client secret, read when a token is exchanged. */
    clientSecretEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'),
    /** RFC 8693 `resource`; default the server's `url` (unless only `audience` is given). */
    resource: z.string().url().optional(),
    /** RFC 8693 `audience`: the upstream's logical name at the authorization server, when it uses one. */
    audience: z.string().min(1).max(2048).optional(),
    scope: z.string().min(1).max(2048).optional(),
    /**
     * The inbound issuer whose tokens `tokenUrl` exchanges; a caller's token of any other issuer
     * is never sent there. Default: the `jwt` issuer, or the one `oauth` issuer; required when
     * `oauth` lists several.
     */
    issuer: z.string().min(1).optional(),
    allowPrivateNetwork: z.boolean().default(false),
  }),
  z.strictObject({ kind: z.literal('perUser') }),
]);

/** `upstreamAuth` replaces the `Authorization` header: the two on one server entry contradict each other. */
export function checkUpstreamAuth(
  config: { servers: Record<string, { transport: string; isolation?: string; upstreamAuth?: unknown; headers?: Record<string, string>; envHeaders?: Record<string, string> }> },
  ctx: { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void },
): void {
  for (const [name, server] of Object.entries(config.servers)) {
    if (server.transport === 'stdio' || server.upstreamAuth === undefined) continue;
    const named = [...Object.keys(server.headers ?? {}), ...Object.keys(server.envHeaders ?? {})].some((h) => h.toLowerCase() === 'authorization');
    if (named) ctx.addIssue({ code: 'custom', path: ['servers', name, 'upstreamAuth'], message: 'cannot be combined with an Authorization header in headers or envHeaders' });
    // A user's token lives on that user's session connection only; a shared or per-principal
    // connection would carry one session's token for others.
    if ((server.upstreamAuth as { kind?: unknown }).kind === 'perUser' && server.isolation !== 'session') {
      ctx.addIssue({ code: 'custom', path: ['servers', name, 'upstreamAuth'], message: 'per-user credentials need isolation "session" (each session\'s own connection carries its own token); remove isolation or set it to "session"' });
    }
  }
}

/**
 * `tokenExchange` sends each principal's own token, so a connection must belong to exactly one
 * principal (`isolation: "principal"`; a shared or pooled connection would carry one user's token
 * for another's calls), and the gateway must hold a token of the caller to exchange (inbound
 * `oauth` or `jwt`: a `bearer` secret or no auth gives it nothing the authorization server knows).
 */
export function checkTokenExchange(
  config: {
    auth?: { kind: string; issuer?: string; issuers?: ReadonlyArray<{ issuer: string }> } | undefined;
    servers: Record<string, { transport: string; isolation: string; upstreamAuth?: { kind: string; issuer?: string | undefined } | undefined }>;
  },
  ctx: { addIssue(issue: { code: 'custom'; path: string[]; message: string }): void },
): void {
  for (const [name, server] of Object.entries(config.servers)) {
    if (server.transport === 'stdio' || server.upstreamAuth?.kind !== 'tokenExchange') continue;
    const path = ['servers', name, 'upstreamAuth'];
    if (server.isolation !== 'principal') {
      ctx.addIssue({ code: 'custom', path, message: 'the token exchange needs "isolation": "principal" on this server: each connection carries one principal\'s exchanged token, so none may be shared or pooled between principals' });
    }
    if (config.auth?.kind !== 'oauth' && config.auth?.kind !== 'jwt') {
      ctx.addIssue({ code: 'custom', path, message: `the token exchange needs inbound "auth" of kind "oauth" or "jwt" (${config.auth === undefined ? 'there is none' : `"${config.auth.kind}" is a shared secret`}): the caller's own access token is what is exchanged` });
      continue;
    }
    const issuerProblem = exchangeIssuerProblem(config.auth, server.upstreamAuth.issuer);
    if (issuerProblem !== undefined) ctx.addIssue({ code: 'custom', path: [...path, 'issuer'], message: issuerProblem });
  }
}

/**
 * Which inbound tokens a token exchange may send to its `tokenUrl`: those of one issuer, the
 * authorization server it is (a token of another issuer must never reach it). Named by
 * `upstreamAuth.issuer`, or implied by inbound auth that has only one.
 */
function exchangeIssuerProblem(auth: { kind: string; issuer?: string; issuers?: ReadonlyArray<{ issuer: string }> }, issuer: string | undefined): string | undefined {
  const known = auth.kind === 'jwt' ? [auth.issuer ?? ''] : (auth.issuers ?? []).map((i) => i.issuer);
  if (issuer === undefined) {
    return known.length > 1 ? `required when inbound "oauth" lists several issuers (${known.join(', ')}): name the one whose tokens this token endpoint exchanges` : undefined;
  }
  return known.includes(issuer) ? undefined : `must be an issuer of inbound "auth" (${known.join(', ')}): only tokens the gateway verified from it are exchanged`;
}
