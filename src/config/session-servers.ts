/**
 * Servers a 2025-era client brings: `initialize` params `_meta["portcullis/servers"]`, a record of
 * server name → server entry in the config's own closed union, narrowed to `stdio` and
 * `streamableHttp` (an HTTP+SSE entry or any other transport is refused). They are the least
 * trusted layer of all — whoever opens a session chose them — so the policy's `sessionServers`
 * decides whether any are accepted (default and strict: no), whether `stdio` ones are (no unless
 * it says so), and how many one session may bring; an entry may never ask for a private network
 * (`allowPrivateNetwork`), and every rule a configured entry obeys (stdio commands, env and cwd,
 * `upstreamHosts`, `envHeaderNames`) applies as well.
 *
 * Pure: the policy is compiled once; each `initialize` is judged without I/O. Refusals are
 * `INVALID_PARAMS` (-32602) naming the server and field, never a value (a URL, command,
 * header or env value the client sent).
 */
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import type { Policy } from '../policy/policy-schema.js';
import { serverPolicyProblems } from './apply-policy.js';
import { httpServerSchema, serverNameSchema, stdioServerSchema, type ServerConfig } from './server-schema.js';

export const SESSION_SERVERS_META_KEY = 'portcullis/servers';

const FIELD = `_meta["${SESSION_SERVERS_META_KEY}"]`;

/** The closed union a session may use: the config's, without HTTP+SSE. */
const sessionServerSchema = z.discriminatedUnion('transport', [stdioServerSchema, httpServerSchema]);

export type SessionServersCheck =
  | { readonly ok: true; readonly servers: Readonly<Record<string, ServerConfig>> | undefined }
  | { readonly ok: false; readonly error: GatewayError };

export type SessionServersGate = (initialize: unknown) => SessionServersCheck;

const NONE: SessionServersCheck = Object.freeze({ ok: true, servers: undefined });

const refuse = (message: string): SessionServersCheck => ({ ok: false, error: new GatewayError('INVALID_PARAMS', `initialize: ${message}`) });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first schema problem of one entry, as `<field>: <expectation>` (zod 4 states no received value). */
function entryProblem(name: string, error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = [name, ...issue.path.map(String)];
  if (issue.code === 'invalid_union' && (issue.path.length === 0 || issue.path.at(-1) === 'transport')) {
    return `${FIELD}.${name}.transport: must be "stdio" or "streamableHttp"`;
  }
  return `${FIELD}.${path.join('.')}: ${issue.message}`;
}

/** The judgement of an endpoint that takes no servers from its clients (`why` it does not). */
function refusingSessionServers(why: string): SessionServersGate {
  return function noSessionServers(initialize) {
    const meta = (initialize as { params?: { _meta?: unknown } } | null | undefined)?.params?._meta;
    if (!isRecord(meta) || !Object.hasOwn(meta, SESSION_SERVERS_META_KEY)) return NONE;
    return refuse(`${FIELD}: ${why}; bring servers on the aggregate endpoint`);
  };
}

/** A side channel serves one server: servers a client brings join the aggregate endpoint only. */
export const sideChannelGate: SessionServersGate = refusingSessionServers("a server's side channel serves that server only");

/** An agent's endpoint serves the servers its allowlist names: none a client brings. */
export const agentEndpointGate: SessionServersGate = refusingSessionServers("an agent's endpoint serves its allowlist only");

/** Compiles the policy's `sessionServers` (and the rules every entry obeys) once. */
export function compileSessionServersGate(policy: Readonly<Policy>): SessionServersGate {
  const allowed = policy.sessionServers;
  const rules = compilePolicyRules(policy);
  return function sessionServersOf(initialize) {
    const meta = (initialize as { params?: { _meta?: unknown } } | null | undefined)?.params?._meta;
    if (!isRecord(meta) || !Object.hasOwn(meta, SESSION_SERVERS_META_KEY)) return NONE;
    if (!allowed.allow) return refuse(`${FIELD}: this gateway's policy does not accept servers from clients (policy sessionServers.allow is false)`);
    const supplied = meta[SESSION_SERVERS_META_KEY];
    if (!isRecord(supplied)) return refuse(`${FIELD}: must be an object of server name to server entry`);
    const names = Object.keys(supplied);
    if (names.length > allowed.maxPerSession) {
      return refuse(`${FIELD}: at most ${allowed.maxPerSession} servers per session (policy sessionServers.maxPerSession)`);
    }
    const servers: Record<string, ServerConfig> = {};
    for (const name of names) {
      // The name is the client's own choice and safe to quote only once it is a valid name.
      if (!serverNameSchema.safeParse(name).success) return refuse(`${FIELD}: a server name must be 1-48 chars of letters, digits, "_", "." or "-"`);
      const entry = supplied[name];
      if (isRecord(entry) && entry.allowPrivateNetwork !== undefined && entry.allowPrivateNetwork !== false) {
        return refuse(`${FIELD}.${name}.allowPrivateNetwork: a server a client brings never reaches a private network`);
      }
      const parsed = sessionServerSchema.safeParse(entry);
      if (!parsed.success) return refuse(entryProblem(name, parsed.error));
      const config = parsed.data;
      if (config.transport === 'stdio' && !allowed.stdio) {
        return refuse(`${FIELD}.${name}.transport: the policy does not let clients run stdio servers (policy sessionServers.stdio is false)`);
      }
      if (config.transport !== 'stdio') {
        // The URL is the client's: nothing of the gateway's environment or credentials may go there
        // (an envHeaders variable or a gateway client secret would be sent to whoever the client names).
        if (Object.keys(config.envHeaders).length > 0) {
          return refuse(`${FIELD}.${name}.envHeaders: a server a client brings gets no value from the gateway's environment; send literal headers instead`);
        }
        if (config.upstreamAuth !== undefined) {
          return refuse(`${FIELD}.${name}.upstreamAuth: a server a client brings gets no credentials of the gateway's (clientCredentials, tokenExchange) and no per-user token store (perUser)`);
        }
      }
      const problems = serverPolicyProblems(name, config, rules);
      if (problems.length > 0) return refuse(problems.map((p) => p.replace(`servers.${name}`, `${FIELD}.${name}`)).join('; '));
      servers[name] = config;
    }
    return { ok: true, servers };
  };
}
