/**
 * The gateway configuration schema: the only definition of configuration. Types are `z.infer`
 * of these schemas; config is parsed once into frozen objects and never re-validated.
 *
 * Servers are a closed union on `transport`. Claude Desktop / VS Code / Cursor `mcpServers`
 * blocks (no `transport`, `command` or `url` present) are normalised in `load.ts` before parsing.
 */
import { z } from 'zod';
import { authConfigSchema } from './auth-schema.js';
import { auditConfigSchema, tracingConfigSchema } from './telemetry-schema.js';
import { checkCluster, clusterSchema } from './cluster-schema.js';
import type { Policy } from '../policy/policy-schema.js';

/** Config keys double as namespaces and URL path segments: keep them plain. */
const serverName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$/, 'must be 1-48 chars of letters, digits, "_", "." or "-"');

/** A server's name (config key, plugin server, session-supplied server). */
export { serverName as serverNameSchema };

const toolList = z.array(z.string().min(1)).default([]);

const common = {
  /**
   * `false`: the operator's global decision to keep this server stopped (it is listed, never
   * started) until a global toggle enables it (docs/customizations.md, "Enablement"). Absent: enabled.
   */
  enabled: z.boolean().optional(),
  mode: z.enum(['required', 'optional']).default('required'),
  /**
   * Which clients share an upstream connection: `session` (each 2025 session its own; 2026
   * requests lease pooled ones), `shared` (one for everyone), `principal` (one per authenticated
   * principal and workspace, for both eras). docs/architecture.md, "Choosing an isolation".
   */
  isolation: z.enum(['session', 'shared', 'principal']).default('session'),
  enabledTools: toolList,
  disabledTools: toolList,
  /** Milliseconds an upstream request may take before the gateway gives up on it. */
  requestTimeoutMs: z.number().int().positive().max(3_600_000).default(300_000),
  /**
   * Tool deferral for this server (README, "Deferral"): `true` leaves its tools out of
   * `tools/list` (reachable through `search_tools` / `call_tool`) even when the global setting is
   * off, `false` always lists them directly; absent or `null` follows the session and
   * `catalogue.deferTools`.
   */
  defer: z.boolean().nullable().optional(),
  /**
   * Tools an operator pins: `true` for every tool of the server, or upstream tool names. A pinned
   * tool is listed directly even when its server is deferred and carries
   * `_meta["anthropic/alwaysLoad"]: true`, so clients that defer natively keep it loaded too.
   */
  alwaysLoad: z.union([z.boolean(), z.array(z.string().min(1)).max(1_000)]).default(false),
};

export const stdioServerSchema = z.strictObject({
  transport: z.literal('stdio'),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  framing: z.enum(['auto', 'ndjson', 'contentLength']).default('auto'),
  ...common,
});

/**
 * How the gateway authenticates to an HTTP upstream beyond `headers`/`envHeaders` (which are the
 * `static` mode). `clientCredentials`: the gateway's own OAuth client for that upstream (RFC 6749
 * §4.4 with the upstream as RFC 8707 `resource`); `tokenExchange`: per principal (below);
 * `perUser`: each 2025 session sends its own token for the upstream (`POST
 * <path>/customizations/authenticate`), carried by that session's own connection only. The
 * client's own token for the gateway is never forwarded.
 */
const upstreamAuthSchema = z.discriminatedUnion('kind', [
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
function checkUpstreamAuth(
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
function checkTokenExchange(
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

/** What every HTTP upstream kind has: where it is, what is sent with each request, egress rules. */
const remote = {
  /** Credentials of the gateway's own for this upstream; absent: only `headers`/`envHeaders`. */
  upstreamAuth: upstreamAuthSchema.optional(),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).default({}),
  /** Header name → environment variable name, read when each request is built. */
  envHeaders: z.record(z.string(), z.string()).default({}),
  allowPrivateNetwork: z.boolean().default(false),
  connectTimeoutMs: z.number().int().positive().max(120_000).default(10_000),
  ...common,
};

export const httpServerSchema = z.strictObject({ transport: z.literal('streamableHttp'), ...remote });

/**
 * A server that only speaks the deprecated HTTP+SSE transport (MCP 2024-11-05): `url` is its SSE
 * endpoint; messages go to the endpoint it announces, which must be of the same origin.
 */
export const sseServerSchema = z.strictObject({ transport: z.literal('sse'), ...remote });

export const serverSchema = z.discriminatedUnion('transport', [stdioServerSchema, httpServerSchema, sseServerSchema]);

/** One `plugins` entry: a directory path, or the path with an explicit global enablement. */
const pluginEntry = z
  .union([z.string().min(1), z.strictObject({ path: z.string().min(1), enabled: z.boolean().default(true) })])
  .transform((entry) => (typeof entry === 'string' ? { path: entry, enabled: true } : entry));

/** The `agents` entry: a directory path, or the path with an explicit global enablement. */
const agentsEntry = z
  .union([z.string().min(1), z.strictObject({ path: z.string().min(1), enabled: z.boolean().default(true) })])
  .transform((entry) => (typeof entry === 'string' ? { path: entry, enabled: true } : entry));

export const gatewayConfigSchema = z.strictObject({
  name: z.string().min(1).default('portcullis'),
  instructions: z.string().optional(),
  /**
   * The gateway's persona: text placed, labelled, at the head of the aggregate endpoint's
   * instructions. A client may ask for its own at `initialize` (init option `agentPersona`)
   * where the policy's `agentPersona` allows it.
   */
  persona: z.string().min(1).max(16_384).optional(),
  /**
   * The gateway's own agents directory (`*.md` agent files, named `<agent>`): a path, or
   * `{ "path", "enabled": false }` to list its agents but serve none. Relative to the config file.
   */
  agents: agentsEntry.optional(),
  listen: z
    .strictObject({
      host: z.string().min(1).default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8787),
      path: z
        .string()
        .regex(/^\/[A-Za-z0-9/_.-]*$/, 'must be an absolute path')
        .refine((p) => p === '/' || !p.endsWith('/'), 'must not end with "/"')
        .default('/mcp'),
      /**
       * The origin clients reach this listener at (`https://mcp.example.com`), when it is not the
       * bound address (a proxy or load balancer in front). Endpoint URIs — the OAuth resource of
       * each endpoint — are this origin plus the endpoint's path, and so is the URL announced at
       * `initialize` (`_meta["portcullis/server"]`), on the Ready line and by /readyz. Absent: `http://<host>:<port>`.
       */
      publicUrl: z
        .string()
        .url()
        .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be an http: or https: URL')
        .refine((u) => { const p = new URL(u); return (p.pathname === '/' || p.pathname === '') && p.search === '' && p.hash === '' && p.username === '' && p.password === ''; }, 'must be an origin only: no path, query, fragment or userinfo')
        .optional(),
    })
    .prefault({}),
  catalogue: z
    .strictObject({
      /** Separator between server and tool name; `null` turns namespacing off. */
      separator: z.string().regex(/^[A-Za-z0-9_.-]{1,4}$/).nullable().default('__'),
      /**
       * Tool deferral (README, "Deferral"): `false` lists every tool, `true` defers every server
       * that does not pin its own `defer`, `{ above: N }` defers once the visible catalogue has
       * more than N tools. Deferred tools leave `tools/list`; `search_tools` and `call_tool` stand in.
       */
      deferTools: z.union([z.boolean(), z.strictObject({ above: z.number().int().min(0).max(1_000_000) })]).default(false),
      /** `tools/list` page size (MCP pagination, `nextCursor`); absent: the whole list in one page. */
      pageSize: z.number().int().min(1).max(10_000).optional(),
      /** Most tools one 2025-era session may add to its list with `search_tools` `load: true` (oldest dropped first). */
      maxLoadedTools: z.number().int().min(1).max(1_000).default(64),
      /**
       * How resources reach clients by default (init option `dataMode` overrides it per client):
       * `resources` as resources only; `tools` also as `<server>__list_resources` and
       * `<server>__read_resource` tools, for clients that support tools only.
       */
      dataMode: z.enum(['resources', 'tools']).default('resources'),
    })
    .prefault({}),
  /**
   * The policy this gateway runs under: a shipped policy's name (`"default"`, `"strict"`) or a
   * path to a policy file, relative to this config file. Absent: the embedded default policy.
   */
  policy: z.string().min(1).optional(),
  /** Inbound authentication (bearer tokens from env, or JWT against a JWKS); absent: none. */
  auth: authConfigSchema.optional(),
  /** Absent values take the policy's limits; a value above the policy's limit is an error. */
  sessions: z
    .strictObject({
      /** Live 2025-era sessions in the whole gateway (every endpoint, adopted ones included). */
      max: z.number().int().positive().max(100_000).optional(),
      idleTimeoutMs: z.number().int().positive().optional(),
      /** Live sessions one principal may hold (absent without auth: `max`, one anonymous principal). */
      maxPerPrincipal: z.number().int().positive().max(100_000).optional(),
      /** `initialize` requests one principal may send per minute (and in one burst). */
      initializePerMinute: z.number().int().positive().optional(),
      /** Sessions' own children of one stdio server alive at once. */
      maxChildrenPerServer: z.number().int().positive().optional(),
      /** A session's stdio child with no call in flight is closed after this long (default 5 min); the session stays. */
      childIdleTimeoutMs: z.number().int().min(100).max(7 * 24 * 3_600_000).optional(),
    })
    .prefault({}),
  /** Inbound limits; absent values take the policy's, a value above the policy's is an error. */
  limits: z
    .strictObject({
      maxBodyBytes: z.number().int().positive().optional(),
      maxJsonDepth: z.number().int().positive().optional(),
      maxHeaderBytes: z.number().int().positive().optional(),
      /** The most one upstream message may hold (HTTP answer, SSE event, stdio message); policy ceiling. */
      maxUpstreamMessageBytes: z.number().int().min(1024).optional(),
    })
    .prefault({}),
  /** Bounded pool of upstream connections for 2026-era (sessionless) requests, per server. */
  statelessPool: z
    .strictObject({
      maxPerServer: z.number().int().positive().max(256).default(8),
      idleTimeoutMs: z.number().int().positive().default(60_000),
      /** How long a call waits for a free connection before it is answered "busy, retry" (0: never waits). */
      maxWaitMs: z.number().int().min(0).max(120_000).default(5_000),
      /**
       * Most connections of one server that one authenticated principal may hold at once, so one
       * client cannot take the whole pool. Absent: half the pool, at least 1.
       */
      maxPerPrincipal: z.number().int().positive().max(256).optional(),
      /**
       * How long a cancelled call's connection waits for the upstream to answer that call before
       * it is closed and replaced; it serves no other call meanwhile.
       */
      cancelGraceMs: z.number().int().min(0).max(60_000).default(2_000),
      /** How long a call suspended for client input (`input_required`) waits for the client's retry. */
      inputTtlMs: z.number().int().min(100).max(3_600_000).default(300_000),
    })
    .refine((pool) => pool.maxPerPrincipal === undefined || pool.maxPerPrincipal <= pool.maxPerServer, {
      path: ['maxPerPrincipal'],
      message: 'must not exceed maxPerServer',
    })
    .prefault({}),
  /** Where 2025-era SSE events are kept for resumption (`Last-Event-ID`). */
  eventStore: z
    .strictObject({
      kind: z.enum(['memory', 'redis']).default('memory'),
      /** Most events kept per session; the oldest are evicted first. */
      limit: z.number().int().positive().max(1_000_000).default(10_000),
      /** Bytes of history kept per session (serialised JSON), oldest evicted first; policy ceiling. */
      maxSessionBytes: z.number().int().min(1024).optional(),
      /** Bytes of history kept for every session of this process together, oldest evicted first; policy ceiling. */
      maxTotalBytes: z.number().int().min(1024).optional(),
      /** Redis URL (`redis://127.0.0.1:6379`); required when kind is "redis". */
      url: z.string().min(1).optional(),
      /**
       * Let the Redis connection reach loopback and private addresses (and use plain `redis:`
       * beyond loopback, never to a public address). Redis usually lives there, but it is an
       * explicit opt-in, as for servers, and only where the policy allows it.
       */
      allowPrivateNetwork: z.boolean().default(false),
      /**
       * Closes a call's SSE response after this long (the client resumes with Last-Event-ID and
       * loses nothing), so proxies with idle timeouts never cut a long call silently. Absent: off.
       */
      pollAfterMs: z.number().int().min(100).max(3_600_000).optional(),
      /**
       * A 2025-era call still unanswered after this long is answered as an SSE stream, resumable
       * from its first event; a quicker call whose only message is its result gets one JSON body
       * (far cheaper). 0: every call streams from its first byte.
       */
      streamAfterMs: z.number().int().min(0).max(3_600_000).default(1_000),
      /** Root of every Redis key the gateway writes (default `portcullis:`); tests use a unique one. */
      keyPrefix: z.string().regex(/^[A-Za-z0-9:_.-]{1,128}$/).optional(),
    })
    .prefault({}),
  /**
   * Tasks (MCP 2025-11-25 utility, 2026-07-28 extension) the gateway tracks for its clients:
   * each task it hands out is bound to the session (or, sessionless, the principal) that
   * created it, and forgotten after `maxTtlMs` even when the upstream keeps it longer.
   */
  tasks: z
    .strictObject({
      /** Live tasks one 2025 session, or one principal's sessionless calls, may hold per endpoint. */
      maxPerOwner: z.number().int().min(1).max(10_000).default(32),
      /** Live tasks one endpoint tracks in all. */
      maxTotal: z.number().int().min(1).max(1_000_000).default(10_000),
      /** Longest a task is kept (its `ttl` is lowered to this); an unlimited upstream ttl gets this. */
      maxTtlMs: z.number().int().min(1_000).max(86_400_000).default(3_600_000),
    })
    .prefault({}),
  /**
   * The admin page (`<path>/admin`, docs/operations.md). With `auth`, only the principals listed
   * here may open it; without `auth`, only clients on a loopback address may.
   */
  admin: z
    .strictObject({
      enabled: z.boolean().default(true),
      principals: z.array(z.string().min(1).max(256)).max(256).default(() => []),
    })
    .prefault({}),
  /** Stopping and reconfiguring a running gateway (docs/operations.md, "Graceful drain", "Hot reload"). */
  lifecycle: z
    .strictObject({
      /** On SIGTERM or SIGINT, how long the calls in flight may take to finish before their streams are ended. */
      drainTimeoutMs: z.number().int().min(0).max(600_000).default(20_000),
      /** Re-read the config file, and the policy file it names, whenever either changes (as SIGHUP does). */
      watch: z.boolean().default(false),
    })
    .prefault({}),
  /** Present: this gateway is one replica of a cluster (cluster-schema.ts; needs `eventStore.kind: "redis"`). */
  cluster: clusterSchema.optional(),
  /**
   * Plugin directories, each one plugin (docs/plugins.md): a path, or `{ "path", "enabled" }`
   * where `enabled: false` keeps the plugin listed but starts none of its servers. Relative paths
   * are resolved against the config file's directory.
   */
  plugins: z.array(pluginEntry).max(256).default(() => []),
  /** Directories whose (non-hidden) sub-directories are plugins. */
  pluginDirs: z.array(z.string().min(1)).max(64).default(() => []),
  /**
   * Where the gateway keeps state of its own: each plugin's `PLUGIN_DATA`
   * (`<stateDir>/plugin-data/<plugin>`), stored enablement decisions. Absent: `.portcullis` in
   * the config file's directory (the working directory when there is no file).
   */
  stateDir: z.string().min(1).optional(),
  /** OpenTelemetry traces over OTLP/HTTP (docs/operations.md, "Traces"); absent: only the `OTEL_*` variables can turn them on. */
  tracing: tracingConfigSchema.optional(),
  /** One JSON line per call, read, get and refusal (docs/operations.md, "Audit log"); absent: none. */
  audit: auditConfigSchema.optional(),
  servers: z.record(serverName, serverSchema),
}).superRefine((config, ctx) => {
  checkUpstreamAuth(config, ctx);
  checkTokenExchange(config, ctx);
  checkCluster(config, ctx);
});

/** The config file as the schema parses it, before the policy is applied. */
export type GatewayConfigFile = z.infer<typeof gatewayConfigSchema>;

/** Inbound limits in force: the config's where it set them, else the policy's. */
export interface EffectiveLimits {
  readonly maxBodyBytes: number;
  readonly maxJsonDepth: number;
  readonly maxHeaderBytes: number;
  readonly maxUpstreamMessageBytes: number;
}

/**
 * The configuration the gateway runs: the file with its policy loaded and applied (every
 * widening attempt refused), and every limit resolved to a number. Built only by `parseConfig`.
 */
export type GatewayConfig = Omit<GatewayConfigFile, 'policy' | 'sessions' | 'limits' | 'eventStore' | 'stateDir'> & {
  readonly policy: Readonly<Policy>;
  /** Absolute: the configured state directory, or the documented default. */
  readonly stateDir: string;
  /** Absolute path of the config file this was read from; absent for a config built in memory. */
  readonly configFile?: string;
  readonly sessions: SessionLimits;
  readonly limits: EffectiveLimits;
  readonly eventStore: EventStoreSettings;
};

/** The event store section with its byte budgets resolved (the config's, else the policy's). */
export type EventStoreSettings = Omit<GatewayConfigFile['eventStore'], 'maxSessionBytes' | 'maxTotalBytes'> & {
  readonly maxSessionBytes: number;
  readonly maxTotalBytes: number;
};

/** Session bounds in force: the config's where it set them, else the policy's (see apply-policy.ts). */
export interface SessionLimits {
  readonly max: number;
  readonly idleTimeoutMs: number;
  readonly maxPerPrincipal: number;
  readonly initializePerMinute: number;
  readonly maxChildrenPerServer: number;
  readonly childIdleTimeoutMs: number;
}
export type ServerConfig = z.infer<typeof serverSchema>;
export type StdioServerConfig = z.infer<typeof stdioServerSchema>;
export type HttpServerConfig = z.infer<typeof httpServerSchema>;
export type SseServerConfig = z.infer<typeof sseServerSchema>;
/** Every server reached over HTTP (through the egress guard), whichever wire it speaks. */
export type RemoteServerConfig = HttpServerConfig | SseServerConfig;
