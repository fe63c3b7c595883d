/**
 * Assembles the Hono app in a fixed, visible order: access log → health routes → edge guards
 * (Host, Origin) → the MCP endpoints (the aggregate, one side channel per server, one endpoint per
 * agent) → the
 * deprecated HTTP+SSE routes of each endpoint (`<endpoint>/sse`, `<endpoint>/messages`). The
 * customisation list (`<path>/customizations`), the admin page (`<path>/admin`) and the Prometheus
 * metrics (`/metrics`) sit behind the same guards and authentication.
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { errorResponse, refusal } from './errors.js';
import type { Logger } from './observability/logger.js';
import { hostGuard, originGuard } from './inbound/edge-guards.js';
import type { McpEndpoint } from './inbound/endpoint.js';
import { incomingBodyOf } from './inbound/incoming-body.js';
import { mountLegacySse } from './inbound/legacy-sse/sse-routes.js';
import type { SubjectTokens } from './upstream/credentials/subject-tokens.js';
import { accessMiddleware, accessOf, authMiddleware, callerOf, principalOf, stripAuthorization, type AuthMiddlewareOptions } from './inbound/auth/auth-middleware.js';
import type { Authenticator } from './inbound/auth/authenticate.js';
import type { UpstreamRegistry } from './upstream/registry.js';
import type { UserTokens } from './upstream/credentials/user-tokens.js';
import { sessionTag } from './observability/session-tag.js';
import type { CustomizationList } from './customizations/customization-list.js';
import type { PluginCustomization } from './customizations/types.js';
import { mountCustomizations } from './customizations/routes.js';
import { mountIntegrity, type IntegrityRoutesOptions } from './admin/integrity-routes.js';
import type { TogglePermissions } from './customizations/toggle-check.js';
import type { GatewayMetrics } from './observability/metrics.js';
import type { OAuthAuthConfig } from './config/auth-schema.js';
import { compileResourceRoutes, type ResourceRoutes } from './inbound/auth/oauth/resource-routes.js';
import type { RequestLimiter } from './policy/request-limits.js';
import type { CompiledAccess } from './policy/access-policy.js';
import { adminGuard } from './admin/admin-access.js';
import { mountAdmin, type AdminRoutesOptions } from './admin/admin-routes.js';
import { readiness } from './admin/readiness.js';
import type { AuditLog } from './observability/audit-log.js';
import { auditRefusals } from './inbound/audit-refusals.js';

export interface AppOptions {
  path: string;
  aggregate: McpEndpoint;
  sideChannels: ReadonlyMap<string, McpEndpoint>;
  /** Agent endpoints by agent name (`<path>/agents/<name>`); an unknown or disabled agent answers 404. */
  agents?: { get(name: string): McpEndpoint | undefined; has(name: string): boolean };
  /** The canonical MCP URL (the `listen.publicUrl` origin, else the bound address, then the path), shown by /readyz. */
  mcpUrl?: string;
  registry: UpstreamRegistry;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  /** Inbound authentication; absent: none (loopback-only deployments, or acknowledgedNoAuth). */
  authenticator?: Authenticator;
  /** Serve the HTTP+SSE transport of 2024-11-05 (the policy's `legacySse.inbound`); default off. */
  legacySse?: boolean;
  logger: Logger;
  /** The customisation list served at `<path>/customizations`; absent: not served. */
  customizations?: CustomizationList;
  /** Review and approval of held tool definitions (`<path>/integrity`, admin/integrity-routes.ts); absent: not served. */
  integrity?: Omit<IntegrityRoutesOptions, 'base'>;
  /** Who may set workspace and global decisions (`POST <path>/customizations/toggle`); absent: nobody. */
  togglePermissions?: TogglePermissions;
  /** The client plugin of a caller's session (servers its client brought), for its list only. */
  sessionPlugin?: (sessionId: string, principal: string | undefined) => PluginCustomization | undefined;
  /** Sessions' own tokens for `perUser` servers (`POST <path>/customizations/authenticate`); absent: not served. */
  userTokens?: UserTokens;
  /** Served at `/metrics` in the Prometheus text format; absent: not served. */
  metrics?: GatewayMetrics;
  /** The `oauth` auth block: protected resource metadata is served and tokens bound to endpoints. */
  oauth?: OAuthAuthConfig;
  /** `listen.publicUrl`: the origin endpoint URIs are built on (else the request's own). */
  publicUrl?: string;
  /** The policy's request rates: the non-MCP routes answer 429 with `Retry-After` when spent. */
  limiter?: RequestLimiter;
  /** The policy's access rules; absent when they hide nothing from anyone. */
  access?: CompiledAccess;
  /** A clustered replica's check of the principal proof a forwarded request carries. */
  forwarded?: AuthMiddlewareOptions['forwarded'];
  /**
   * The policy's `admins`, the one list of admins: they alone read `/metrics` (with auth on;
   * without it, loopback clients — admin/admin-access.ts) and see every server in /readyz
   * whatever the access rules hide (admin page on or off).
   */
  admins?: readonly string[];
  /** The admin page at `<path>/admin` (admin/admin-routes.ts); absent: not served. */
  admin?: Omit<AdminRoutesOptions, 'base'>;
  /** Every refusal at the edge gets an audit line (inbound/audit-refusals.ts); absent: none. */
  audit?: AuditLog;
  /** Where callers' verified tokens are kept for `upstreamAuth` `tokenExchange`; absent: kept nowhere. */
  subjectTokens?: SubjectTokens;
}

const notFound = () => refusal('NOT_FOUND', 'Not found');

export function createApp(options: AppOptions): Hono {
  const app = new Hono();
  const base = options.path === '/' ? '' : options.path;

  app.use('*', async function accessLog(c, next) {
    const started = performance.now();
    await next();
    options.logger.debug(
      {
        http: c.req.method,
        path: c.req.path,
        status: c.res.status,
        session: sessionTag(c.req.header('mcp-session-id')),
        ms: Math.round(performance.now() - started),
      },
      'http',
    );
  });

  if (options.audit !== undefined) {
    const agents = options.agents;
    app.use(
      '*',
      auditRefusals({
        audit: options.audit,
        base,
        sideChannels: options.sideChannels, // live: a server a reload removed is no longer one
        ...(agents === undefined ? {} : { hasAgent: (name: string) => agents.has(name) }),
        principalOf,
      }),
    );
  }

  // Every route is behind the Host and Origin guards: a DNS-rebinding page must not read
  // /readyz (server names and states) any more than it may call a tool.
  app.use('*', hostGuard({ allowedHosts: options.allowedHosts, logger: options.logger }), originGuard({ allowedOrigins: options.allowedOrigins }));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  const resources: ResourceRoutes | undefined =
    options.oauth === undefined
      ? undefined
      : compileResourceRoutes({
          config: options.oauth,
          ...(options.publicUrl === undefined ? {} : { publicUrl: options.publicUrl }),
          layout: { base, has: (kind, name) => (kind === 'servers' ? options.sideChannels.has(name) : options.agents?.has(name) === true) },
        });
  // Protected resource metadata is how a client learns where to get a token: before auth.
  resources?.mount(app);
  // Everything past liveness needs a principal when auth is on: /readyz names the servers.
  const metrics = options.metrics;
  const subjectTokens = options.subjectTokens;
  if (options.authenticator !== undefined) {
    app.use(
      '*',
      authMiddleware(options.authenticator, {
        ...(resources === undefined ? {} : { targetOf: (c: Context) => resources.targetOf(c) }),
        ...(options.forwarded === undefined ? {} : { forwarded: options.forwarded }),
        onFailure: (code) => metrics?.authFailed(code),
        // The rest of the request runs with its own token as the subject of any exchange in it.
        ...(subjectTokens === undefined ? {} : { withVerifiedToken: (principal, token, claims, next) => subjectTokens.run(principal, token, claims, next) }),
      }),
    );
  }
  if (options.access !== undefined) app.use('*', accessMiddleware(options.access));
  const limiter = options.limiter;
  if (limiter !== undefined) {
    // The MCP routes spend their rate in the router (a JSON-RPC error the model reads); these
    // answer plain HTTP, so a spent rate is a 429 with Retry-After (errorResponse adds it).
    const spend: MiddlewareHandler = async (c, next) => {
      await limiter.admit({ principal: principalOf(c), method: `GET ${c.req.routePath}` });
      await next();
    };
    for (const route of ['/readyz', '/metrics', `${base}/customizations`, `${base}/customizations/*`]) app.use(route, spend);
  }
  const adminList = options.admins ?? options.admin?.admins ?? [];
  const admins: ReadonlySet<string> = new Set(adminList);
  const adminRefusal = adminGuard({ authOn: options.authenticator !== undefined, admins: adminList });
  app.get('/readyz', (c) => {
    const principal = principalOf(c);
    const answer = readiness({
      ready: options.registry.ready(),
      url: options.mcpUrl,
      servers: options.registry.status(),
      access: accessOf(c),
      admin: principal !== undefined && admins.has(principal),
    });
    return c.json(answer.body, answer.status);
  });

  // The client's Authorization header stops here: nothing past the edge ever sees it. The body
  // is read from the Node request when there is one, never through a WHATWG stream (body.ts).
  const serve = (endpoint: McpEndpoint, c: Context): Promise<Response> => {
    const incoming = incomingBodyOf(c);
    return endpoint.fetch(stripAuthorization(c.req.raw, incoming !== undefined), callerOf(c), incoming);
  };
  if (metrics !== undefined) {
    // Every server's name and state, hidden ones included: for admins only, like the admin page.
    app.get('/metrics', async (c) => {
      const refusal = adminRefusal(c, '/metrics');
      if (refusal !== undefined) return refusal;
      const { body, contentType } = await metrics.render();
      return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
    });
  }
  if (options.customizations !== undefined) {
    const permissions = options.togglePermissions ?? { admins: new Set<string>(), openToLocal: false };
    const ownPlugin = options.sessionPlugin;
    mountCustomizations(app, {
      base,
      list: options.customizations,
      principalOf,
      ...(options.userTokens === undefined ? {} : { userTokens: { store: options.userTokens, registry: options.registry } }),
      accessOf,
      permissions,
      ...(ownPlugin === undefined
        ? {}
        : {
            sessionPlugin: (c: Context) => {
              const sessionId = c.req.header('mcp-session-id');
              return sessionId === undefined ? undefined : ownPlugin(sessionId, principalOf(c));
            },
          }),
    });
  }
  if (options.admin !== undefined) mountAdmin(app, { ...options.admin, base });
  if (options.integrity !== undefined) mountIntegrity(app, { ...options.integrity, base });
  app.all(base || '/', (c) => serve(options.aggregate, c));
  app.all(`${base}/servers/:name`, (c) => {
    // A server the caller's rules hide has no side channel for it (it answers like an unknown name).
    const endpoint = options.sideChannels.get(c.req.param('name'));
    return endpoint === undefined || !endpoint.shownTo(accessOf(c)) ? notFound() : serve(endpoint, c);
  });
  const agents = options.agents;
  if (agents !== undefined) {
    app.all(`${base}/agents/:name`, async (c) => {
      // An agent whose every tool the caller's rules hide does not exist for that caller.
      const endpoint = agents.get(c.req.param('name'));
      return endpoint === undefined || !(await endpoint.existsFor(callerOf(c))) ? notFound() : serve(endpoint, c);
    });
  }
  mountLegacySse(app, { base, aggregate: options.aggregate, sideChannels: options.sideChannels, enabled: options.legacySse ?? false });
  app.notFound(() => notFound());
  app.onError((error) => {
    options.logger.error({ err: error.message }, 'unhandled error in request');
    return errorResponse(error);
  });
  return app;
}
