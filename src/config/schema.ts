/**
 * The gateway configuration schema: the only definition of configuration. Types are `z.infer`
 * of these schemas; config is parsed once into frozen objects and never re-validated.
 *
 * A server's entry is server-schema.ts (a closed union on `transport`), its `upstreamAuth`
 * upstream-auth-schema.ts; the checks that span sections run in this schema's refinement.
 */
import { z } from 'zod';
import { authConfigSchema } from './auth-schema.js';
import { auditConfigSchema, tracingConfigSchema } from './telemetry-schema.js';
import { checkCluster, clusterSchema } from './cluster-schema.js';
import { checkTokenExchange, checkUpstreamAuth } from './upstream-auth-schema.js';
import { serverNameSchema, serverSchema, type ServerConfig } from './server-schema.js';
import type { Policy } from '../policy/policy-schema.js';

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
       * Tool deferral (docs/reference.md, "Deferral"): `false` lists every tool, `true` defers every server
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
   * The admin page (`<path>/admin`, docs/operations.md). With `auth`, only the policy's `admins`
   * may open it (the one list of admins); without `auth`, only clients on a loopback address may.
   */
  admin: z
    .strictObject({
      enabled: z.boolean().default(true),
    })
    .prefault({}),
  /**
   * Tool integrity (docs/security.md, "Tool integrity"): `mode` `off`, `warn` or `hold` (absent:
   * the policy's `toolIntegrity.minimumMode`; never less than it), and whether a server's first
   * listing is trusted (`trustOnFirstUse`; false: every tool waits for an admin's approval).
   */
  toolIntegrity: z
    .strictObject({
      mode: z.enum(['off', 'warn', 'hold']).optional(),
      trustOnFirstUse: z.boolean().default(true),
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
  servers: z.record(serverNameSchema, serverSchema),
}).superRefine((config, ctx) => {
  checkUpstreamAuth(config, ctx);
  checkTokenExchange(config, ctx);
  checkCluster(config, ctx);
});

/** The config file as the schema parses it, before the policy is applied. */
export type GatewayConfigFile = Omit<z.infer<typeof gatewayConfigSchema>, 'servers'> & {
  /** Each entry as parsed, with its `${env:NAME}` references compiled (env-references.ts). */
  servers: Record<string, ServerConfig>;
};

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
export type GatewayConfig = Omit<GatewayConfigFile, 'policy' | 'sessions' | 'limits' | 'eventStore' | 'stateDir' | 'toolIntegrity'> & {
  readonly policy: Readonly<Policy>;
  /** Tool integrity in force: the config's mode, else the policy's minimum (never less). */
  readonly toolIntegrity: { readonly mode: 'off' | 'warn' | 'hold'; readonly trustOnFirstUse: boolean };
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

/** A server's entry and its kinds (server-schema.ts), named here with the rest of the config. */
export type { AutoServerConfig, HttpServerConfig, RemoteServerConfig, ServerConfig, SseServerConfig, StdioServerConfig } from './server-schema.js';
