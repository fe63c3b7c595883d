/**
 * The policy file schema: the organisation's deploy-time security stance (docs/decisions.md, "Trust
 * layers"). A gateway config may narrow what its policy allows, never widen it; nothing that
 * arrives over the wire, from a plugin or from a session can change it.
 *
 * Every field has a default, and the defaults are exactly `policies/default.json` (a test holds
 * the two together), so `{}` is the default policy and the gateway needs no file to be safe:
 * loopback Host names only, loopback Origins only, private-network upstreams only for servers an
 * operator opted in one by one, well-known cloud and CI credentials never sent upstream through
 * `envHeaders`, code-loading and config-redirecting variables never set on a stdio child, and
 * bounded inputs.
 * `policies/README.md` documents every field.
 */
import { z } from 'zod';
import { compileHostCheck } from './host-check.js';
import { isCanonicalOrigin } from './origin-check.js';
import { compileUpstreamHosts } from './policy-rules.js';
import { DEFAULT_STDIO_DENIED_ENV } from './stdio-env-names.js';
import { isStdioCommandEntry } from './stdio-rules.js';

/**
 * Variables `envHeaders` may never read under the default policy: cloud provider, CI runner and
 * secret-store credentials, and the gateway's own `PORTCULLIS_*` settings. `envHeaders` sends a
 * variable's value to a remote server; a config entry (or an imported `mcp.json`) naming one of
 * these would ship the host's cloud keys to whoever runs that server. `GITHUB_TOKEN` is not on the
 * list on purpose: it is the credential GitHub's own MCP server expects.
 */
export const DEFAULT_ENV_HEADER_DENY: readonly string[] = Object.freeze([
  'AWS_*',
  'AZURE_*',
  'ARM_CLIENT_SECRET',
  'ARM_ACCESS_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CREDENTIALS',
  'GOOGLE_OAUTH_ACCESS_TOKEN',
  'CLOUDSDK_*',
  'ACTIONS_*',
  'CI_JOB_TOKEN',
  'CI_JOB_JWT*',
  'SYSTEM_ACCESSTOKEN',
  'BUILDKITE_AGENT_ACCESS_TOKEN',
  'VAULT_TOKEN',
  'OP_SERVICE_ACCOUNT_TOKEN',
  'NPM_TOKEN',
  'NODE_AUTH_TOKEN',
  'PORTCULLIS_*',
]);

/** Loopback, as every local client spells it. */
export const DEFAULT_POLICY_HOSTS: readonly string[] = Object.freeze(['127.0.0.1', 'localhost', '[::1]']);

const accessGlob = z.string().min(1, 'must be a non-empty glob').max(256);

/** One `access` rule: whom it matches, what it covers, and its effect. */
const accessRule = z.strictObject({
  name: z.string().min(1).max(128).optional(),
  principals: z.array(accessGlob).min(1).max(1000).optional(),
  claims: z.record(z.string().min(1).max(128), z.array(z.string().max(1024)).min(1).max(1000)).optional(),
  scopes: z.array(z.string().min(1).max(256)).min(1).max(64).optional(),
  effect: z.enum(['allow', 'deny']),
  servers: z.array(accessGlob).min(1).max(1000).optional(),
  tools: z.array(accessGlob).min(1).max(1000).optional(),
});

/** One token-bucket rate: `perMinute` sustained, `burst` at once (default `perMinute`). */
const rateSpec = z.strictObject({
  perMinute: z.number().positive().max(10_000_000),
  burst: z.number().int().min(1).max(10_000_000).optional(),
});

/** The default ceilings: the limits a config may narrow but not raise. */
export const DEFAULT_POLICY_LIMITS = Object.freeze({
  maxBodyBytes: 1024 * 1024,
  maxJsonDepth: 64,
  maxSessions: 1000,
  sessionIdleTimeoutMs: 30 * 60_000,
  maxHeaderBytes: 16 * 1024,
  maxSessionsPerPrincipal: 100,
  initializePerMinute: 1000,
  maxSessionChildrenPerServer: 32,
  maxUpstreamMessageBytes: 16 * 1024 * 1024,
  maxSessionHistoryBytes: 16 * 1024 * 1024,
  maxHistoryBytes: 256 * 1024 * 1024,
});

/** An environment variable name or a glob over names (`*` any run, `?` one character). */
const envNameGlob = z
  .string()
  .regex(/^[A-Za-z0-9_*?]+$/, 'must be an environment variable name or a glob of one (letters, digits, "_", "*", "?")');

const hostEntry = z.string().refine((entry) => {
  try {
    compileHostCheck([entry]);
    return true;
  } catch {
    return false;
  }
}, 'must be a bare hostname or IP literal (no scheme, port or path)');

const originEntry = z
  .string()
  .refine((entry) => entry === 'null' || isCanonicalOrigin(entry), 'must be a canonical origin (lower-case scheme://host[:port], no path, no default port) or "null"');

/** `docs.example.com`, `*.example.com` (any subdomain, not the bare domain), `10.0.0.5`, `[fd00::1]`. */
const UPSTREAM_HOST = /^(?:(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/i;

const upstreamHostEntry = z
  .string()
  .refine((entry) => {
    if (!UPSTREAM_HOST.test(entry)) return false;
    try {
      compileUpstreamHosts([entry]);
      return true;
    } catch {
      return false;
    }
  }, 'must be a hostname, "*.domain" or an IP literal (no scheme, port or path)')
  .transform((entry) => entry.toLowerCase());

const stdioCommandEntry = z
  .string()
  .refine(isStdioCommandEntry, 'must be a program name (found on the gateway\'s PATH) or an absolute path');

const toolGlob = z.string().min(1, 'must be a non-empty glob').max(256);

/** An integer limit within bounds that keep the gateway sane whatever a policy says. */
function limit(min: number, max: number, fallback: number) {
  return z.number().int().min(min).max(max).default(fallback);
}

/** The policy file: strict (an unknown field is an error), every field defaulted. */
export const policySchema = z.strictObject({
  /** Free text for humans: what this policy is for. Ignored by the gateway. */
  description: z.string().optional(),
  /**
   * Lets a non-loopback listener start without inbound authentication (docs/decisions.md,
   * "Binding beyond loopback").
   */
  acknowledgedNoAuth: z.boolean().default(false),
  /** Host header allowlist (DNS-rebinding defence); exact names, case and port ignored. */
  allowedHosts: z.array(hostEntry).min(1, 'must list at least one host').default(() => [...DEFAULT_POLICY_HOSTS]),
  /** Origin allowlist; `null` means the loopback origins of the port actually bound. */
  allowedOrigins: z.array(originEntry).nullable().default(null),
  privateNetwork: z
    .strictObject({
      /** May a server entry set `allowPrivateNetwork: true` (reach loopback, LAN, metadata ranges)? */
      allowServers: z.boolean().default(true),
      /**
       * May the gateway's own connections (`auth.jwks.url`, `eventStore.url`, cluster peers) opt
       * into private addresses with their field's `allowPrivateNetwork`?
       */
      allowInfrastructure: z.boolean().default(true),
    })
    .prefault({}),
  /**
   * The HTTP+SSE transport of protocol revision 2024-11-05, deprecated since 2025-03-26 (its
   * session id travels in the URL, and a stream cut loses the session): may clients use it
   * (`inbound`: `<path>/sse` and `<path>/messages`), and may servers be configured with
   * `transport: "sse"` (`upstream`)?
   */
  legacySse: z
    .strictObject({
      inbound: z.boolean().default(true),
      upstream: z.boolean().default(true),
    })
    .prefault({}),
  /** When present, every HTTP upstream's host (Streamable HTTP or SSE) must match one entry. */
  upstreamHosts: z.array(upstreamHostEntry).optional(),
  /** When present, every URL the gateway dials on its own behalf (JWKS, Redis, cluster peers) must name a matching host. */
  infrastructureHosts: z.array(upstreamHostEntry).optional(),
  /** Globs on tool names (namespaced, canonical `server__tool` and bare), hidden and not callable. */
  deniedTools: z.array(toolGlob).default(() => []),
  /** Which environment variables `envHeaders` may read: matches an `allow` glob and no `deny` glob. */
  envHeaderNames: z
    .strictObject({
      allow: z.array(envNameGlob).default(() => ['*']),
      deny: z.array(envNameGlob).default(() => [...DEFAULT_ENV_HEADER_DENY]),
    })
    .prefault({}),
  /** Globs of environment variable names a stdio server entry may not set (case-insensitive). */
  stdioDeniedEnv: z.array(envNameGlob).default(() => [...DEFAULT_STDIO_DENIED_ENV]),
  /** When present, the only variable names a stdio server entry may set (the deny-list still applies). */
  stdioAllowedEnv: z.array(envNameGlob).optional(),
  /** When present, the only commands a stdio server entry may run: program names or absolute paths. */
  stdioCommands: z.array(stdioCommandEntry).optional(),
  /** May a stdio server entry choose its working directory (`cwd`)? */
  stdioAllowCwd: z.boolean().default(true),
  /**
   * What plugins (the least trusted layer) may declare. `stdio`: may a plugin's stdio servers
   * run at all? When they may, the stdio rules above apply to them as to any server entry.
   */
  plugins: z
    .strictObject({
      stdio: z.boolean().default(true),
    })
    .prefault({}),
  /**
   * Principals (as authentication names them) that may set workspace and global enablement
   * decisions (docs/customizations.md, "Who may toggle"). With authentication off, only a
   * loopback listener lets its callers do so; empty: nobody else.
   */
  admins: z.array(z.string().min(1).max(256)).max(1_000).default(() => []),
  /**
   * Tool integrity (docs/security.md, "Tool integrity"): the least a gateway config may ask for
   * (`minimumMode`: `off`, `warn` or `hold`; a config asking less is refused), and whether
   * approving or rejecting a held tool needs authentication (`decisionsRequireAuth`; without it,
   * a loopback gateway lets any local caller decide, as it lets it toggle).
   */
  toolIntegrity: z
    .strictObject({
      minimumMode: z.enum(['off', 'warn', 'hold']).default('warn'),
      decisionsRequireAuth: z.boolean().default(false),
    })
    .prefault({}),
  /**
   * May a client replace the gateway's persona with its own (init option `agentPersona`), and
   * how long may it be? Its text lands in the instructions a model reads.
   */
  agentPersona: z
    .strictObject({
      allowed: z.boolean().default(true),
      maxChars: z.number().int().min(1).max(16_384).default(2_000),
    })
    .prefault({}),
  /**
   * Who may see and use which servers and tools (policy/access-policy.ts): rules matched on the
   * principal, its token's claims and scopes, first match per item decides, else `default`.
   * Evaluated when lists are built and again on every call, read, get and completion.
   */
  access: z
    .strictObject({
      default: z.enum(['allow', 'deny']).default('allow'),
      rules: z.array(accessRule).max(1000).default(() => []),
    })
    .prefault({}),
  /**
   * Request rates per principal (token buckets; shared in Redis when replicas are clustered):
   * `requests` — every MCP request a principal sends; `toolCalls` — `tools/call` of one tool by
   * one principal. An exhausted bucket answers a JSON-RPC error with the delay in `data.retryAfterMs`.
   * Absent: not limited (without authentication every caller is one principal).
   */
  rateLimits: z
    .strictObject({
      requests: rateSpec.optional(),
      toolCalls: rateSpec.optional(),
    })
    .prefault({}),
  /**
   * Servers a 2025-era client brings in its `initialize` (`_meta["portcullis/servers"]`, the
   * least trusted layer): `allow` accepts any at all (default: no), `stdio` lets them run
   * commands on the gateway's host (default: no; `streamableHttp` only), `maxPerSession` bounds
   * them. They never reach a private network, and every rule above applies to them.
   */
  sessionServers: z
    .strictObject({
      allow: z.boolean().default(false),
      stdio: z.boolean().default(false),
      maxPerSession: z.number().int().min(1).max(64).default(4),
    })
    .prefault({}),
  /** Ceilings: a config value may be lower, never higher; an absent config value takes these. */
  limits: z
    .strictObject({
      maxBodyBytes: limit(1024, 64 * 1024 * 1024, DEFAULT_POLICY_LIMITS.maxBodyBytes),
      maxJsonDepth: limit(2, 1000, DEFAULT_POLICY_LIMITS.maxJsonDepth),
      maxSessions: limit(1, 100_000, DEFAULT_POLICY_LIMITS.maxSessions),
      sessionIdleTimeoutMs: limit(1000, 7 * 24 * 3_600_000, DEFAULT_POLICY_LIMITS.sessionIdleTimeoutMs),
      maxHeaderBytes: limit(1024, 1024 * 1024, DEFAULT_POLICY_LIMITS.maxHeaderBytes),
      maxSessionsPerPrincipal: limit(1, 100_000, DEFAULT_POLICY_LIMITS.maxSessionsPerPrincipal),
      initializePerMinute: limit(1, 1_000_000, DEFAULT_POLICY_LIMITS.initializePerMinute),
      maxSessionChildrenPerServer: limit(1, 10_000, DEFAULT_POLICY_LIMITS.maxSessionChildrenPerServer),
      /** The most one upstream message may hold: a JSON answer, one SSE event, one stdio message. */
      maxUpstreamMessageBytes: limit(1024, 1024 * 1024 * 1024, DEFAULT_POLICY_LIMITS.maxUpstreamMessageBytes),
      /** Bytes of resumable event history kept for one session (serialised JSON). */
      maxSessionHistoryBytes: limit(1024, 4 * 1024 * 1024 * 1024, DEFAULT_POLICY_LIMITS.maxSessionHistoryBytes),
      /** Bytes of resumable event history kept for all sessions of the process together. */
      maxHistoryBytes: limit(1024, 64 * 1024 * 1024 * 1024, DEFAULT_POLICY_LIMITS.maxHistoryBytes),
    })
    .prefault({}),
});

export type Policy = z.infer<typeof policySchema>;
/** The `limits` block of a parsed policy. */
export type PolicyLimits = Policy['limits'];
