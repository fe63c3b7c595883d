/**
 * One `servers` entry: a closed union on `transport` (`stdio`, `streamableHttp`, `sse`, `auto`) with
 * what every kind shares (mode, isolation, tool filters, deferral, timeouts). The same schema
 * parses configured servers, plugin servers (plugins/server-config.ts) and servers a 2025 client
 * brings (session-servers.ts). Claude Desktop / VS Code / Cursor `mcpServers` blocks (no
 * `transport`, `command` or `url` present) are normalised in `load.ts` before parsing.
 */
import { z } from 'zod';
import { upstreamAuthSchema } from './upstream-auth-schema.js';
import type { EnvReferences } from './env-references.js';

/**
 * Names every JavaScript object already carries (`constructor`, `toString`, `__proto__`…). A
 * server so named would be written into, or read from, a plain object's prototype by the code
 * that handles it: `__proto__` vanishes from a parsed file, `constructor` is found for a server
 * nobody configured. Refused wherever a server is named.
 */
const OBJECT_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** True for a name no server may take (`OBJECT_NAMES`). */
export function reservedServerName(name: string): boolean {
  return OBJECT_NAMES.has(name);
}

/** Why a reserved name is refused, and what to do: the rest of the diagnostic after the server's path. */
export const RESERVED_SERVER_NAME = 'is a name every JavaScript object already has (like "constructor" or "__proto__"), so the gateway cannot hold a server by it; rename the server';

/** Config keys double as namespaces and URL path segments: keep them plain. */
const serverName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$/, 'must be 1-48 chars of letters, digits, "_", "." or "-"')
  .refine((name) => !reservedServerName(name), RESERVED_SERVER_NAME);

/** A server's name (config key, plugin server, session-supplied server). */
export { serverName as serverNameSchema };

const toolList = z.array(z.string().min(1)).default([]);

/**
 * Which clients share an upstream connection: `principal` (the default: one per authenticated
 * principal and workspace, for both eras), `session` (each 2025 session its own; 2026 requests
 * lease pooled ones), `shared` (one for everyone). docs/architecture.md, "Choosing an isolation";
 * docs/decisions.md, "Two wire decisions of the relay core".
 */
const isolationSchema = z
  .enum(['session', 'shared', 'principal'])
  .describe('Which clients share an upstream connection. Absent: "principal", or "session" when upstreamAuth is perUser.');

type Isolation = z.infer<typeof isolationSchema>;

const common = {
  /**
   * `false`: the operator's global decision to keep this server stopped (it is listed, never
   * started) until a global toggle enables it (docs/customizations.md, "Enablement"). Absent: enabled.
   */
  enabled: z.boolean().optional(),
  mode: z.enum(['required', 'optional']).default('required'),
  isolation: isolationSchema.default('principal'),
  enabledTools: toolList,
  disabledTools: toolList,
  /** Milliseconds an upstream request may take before the gateway gives up on it. */
  requestTimeoutMs: z.number().int().positive().max(3_600_000).default(300_000),
  /**
   * Tool deferral for this server (docs/reference.md, "Deferral"): `true` leaves its tools out of
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
  isolation: isolationSchema.optional(),
};

/**
 * An HTTP server's isolation when its entry names none: `session` for per-user credentials (a
 * user's token rides that user's session connection only), else `principal`.
 */
function withIsolation<T extends { isolation?: Isolation | undefined; upstreamAuth?: { kind: string } | undefined }>(server: T): T & { isolation: Isolation } {
  return { ...server, isolation: server.isolation ?? (server.upstreamAuth?.kind === 'perUser' ? 'session' : 'principal') };
}

export const httpServerSchema = z.strictObject({ transport: z.literal('streamableHttp'), ...remote }).transform(withIsolation);

/**
 * A server that only speaks the deprecated HTTP+SSE transport (MCP 2024-11-05): `url` is its SSE
 * endpoint; messages go to the endpoint it announces, which must be of the same origin.
 */
export const sseServerSchema = z.strictObject({ transport: z.literal('sse'), ...remote }).transform(withIsolation);

/**
 * A URL whose transport is not known (a bare `url` imported from a client config): Streamable HTTP
 * is tried first, and HTTP+SSE when the URL answers the first POST with 404 or 405 and the policy
 * allows HTTP+SSE upstreams (`legacySse.upstream`); the log says which one each connection chose.
 */
export const autoServerSchema = z.strictObject({ transport: z.literal('auto'), ...remote }).transform(withIsolation);

export const serverSchema = z.discriminatedUnion('transport', [stdioServerSchema, httpServerSchema, sseServerSchema, autoServerSchema]);

/**
 * Set by the operator's config loader only (load.ts): the entry's `${env:NAME}` references,
 * compiled. No input can set it (the schemas are strict), so plugin and session servers never
 * have one and their values stay literal (env-references.ts).
 */
interface OperatorFields {
  readonly envReferences?: EnvReferences;
}

export type StdioServerConfig = z.infer<typeof stdioServerSchema> & OperatorFields;
export type HttpServerConfig = z.infer<typeof httpServerSchema> & OperatorFields;
export type SseServerConfig = z.infer<typeof sseServerSchema> & OperatorFields;
export type AutoServerConfig = z.infer<typeof autoServerSchema> & OperatorFields;
export type ServerConfig = StdioServerConfig | HttpServerConfig | SseServerConfig | AutoServerConfig;
/** Every server reached over HTTP (through the egress guard), whichever wire it speaks. */
export type RemoteServerConfig = HttpServerConfig | SseServerConfig | AutoServerConfig;
