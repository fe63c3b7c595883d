/**
 * Loading configuration: read the file, normalise the `mcpServers` shapes other MCP hosts use,
 * parse once with zod, run the semantic checks, load the policy the config names and apply it
 * (src/config/apply-policy.ts), and freeze. Every problem is collected (not just
 * the first) and phrased so that it names the server and field but never echoes a command, an
 * argument, a URL or a header value: config files routinely hold secrets.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { ConfigError, GatewayError } from '../errors.js';
import { Redactor } from '../observability/logger.js';
import { loadPolicy } from '../policy/policy-load.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import { applyPolicy, serverPolicyProblems } from './apply-policy.js';
import { parseConfigText } from './config-text.js';
import { gatewayConfigSchema, type GatewayConfig } from './schema.js';
import { closestKey, keysAt } from './key-suggestions.js';
import { RESERVED_SERVER_NAME, reservedServerName, serverSchema } from './server-schema.js';
import { semanticProblems, serverProblems } from './semantic-checks.js';
import { compileEnvReferences, parseInputs, type InputVariables } from './env-references.js';
import type { ServerConfig } from './server-schema.js';

/** `type` values of the VS Code / Cursor / Claude Desktop formats and what they mean here. */
const hostTransportAliases: Record<string, string> = {
  stdio: 'stdio',
  http: 'streamableHttp',
  streamableHttp: 'streamableHttp',
  'streamable-http': 'streamableHttp',
  sse: 'sse',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Accepts `servers` (ours or VS Code's) or `mcpServers` (Claude Desktop, Cursor). An entry without
 * `transport` gets one from its `type`, or from which of `command` / `url` it has. An entry with
 * both or neither is left without a transport so the schema reports it, with a clear message.
 */
export function normaliseServers(raw: unknown): { value: unknown; problems: string[] } {
  if (!isRecord(raw)) return { value: raw, problems: [] };
  const problems: string[] = [];
  // `$schema` points editors at schema/gateway.schema.json; it configures nothing. `inputs` (VS
  // Code's) is read by parseConfig for `${input:ID}` (env-references.ts).
  const { mcpServers, $schema, inputs: _inputs, ...rest } = raw;
  if ($schema !== undefined && typeof $schema !== 'string') problems.push('$schema: must be a string (the URL or path of the JSON Schema)');
  let servers = rest.servers;
  if (mcpServers !== undefined) {
    if (servers !== undefined) problems.push('config: use either "servers" or "mcpServers", not both');
    else servers = mcpServers;
  }
  if (!isRecord(servers)) return { value: { ...rest, servers }, problems };

  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers)) {
    // Written into `out`, `__proto__` would set its prototype and the server would vanish.
    if (reservedServerName(name)) {
      problems.push(`servers.${name}: ${RESERVED_SERVER_NAME}`);
      continue;
    }
    if (!isRecord(entry) || entry.transport !== undefined) {
      out[name] = entry;
      continue;
    }
    const { type, ...fields } = entry;
    const hasCommand = fields.command !== undefined;
    const hasUrl = fields.url !== undefined;
    if (type !== undefined) {
      const transport = typeof type === 'string' ? hostTransportAliases[type] : undefined;
      if (transport === undefined) {
        problems.push(`servers.${name}.type: unsupported transport type (use "stdio", "http" or "sse")`);
        continue;
      }
      out[name] = { transport, ...fields };
    } else if (hasCommand && hasUrl) {
      problems.push(`servers.${name}: has both "command" and "url"; a server is either stdio or HTTP`);
    } else if (!hasCommand && !hasUrl) {
      problems.push(`servers.${name}: needs "command" (stdio) or "url" (Streamable HTTP)`);
    } else {
      out[name] = { transport: hasCommand ? 'stdio' : 'streamableHttp', ...fields };
    }
  }
  return { value: { ...rest, servers: out }, problems };
}

function describePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'config';
  return path.map(String).join('.');
}

/** Keys that moved out of the config: where they went, instead of zod's "unrecognized key". */
const MOVED_KEYS: ReadonlyMap<string, string> = new Map([
  [
    'admin.principals',
    "admin.principals: the list of admins is the policy's \"admins\" (one list for the admin page, /metrics, /readyz and workspace and global toggles); move these principals there",
  ],
]);

/** `; did you mean "servers"?` for unknown keys close to one the schema takes at that place (the root also takes `mcpServers`). */
function didYouMean(path: readonly PropertyKey[], keys: readonly string[]): string {
  const candidates = [...keysAt(gatewayConfigSchema, path), ...(path.length === 0 ? ['mcpServers'] : [])];
  const guesses = keys.flatMap((key) => {
    const guess = closestKey(key, candidates);
    return guess === undefined ? [] : [{ key, guess }];
  });
  if (guesses.length === 0) return '';
  if (keys.length === 1) return `; did you mean "${guesses[0]!.guess}"?`;
  return `; did you mean ${guesses.map(({ key, guess }) => `"${guess}" (for "${key}")`).join(', ')}?`;
}

/** Turns zod issues into diagnostics; zod 4 messages state expectations, not received values. */
function schemaProblems(error: z.ZodError): string[] {
  return error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const moved = issue.keys.map((key) => MOVED_KEYS.get(describePath([...issue.path, key])));
      if (moved.every((message) => message !== undefined)) return moved;
      return `${describePath(issue.path)}: ${issue.message}${didYouMean(issue.path, issue.keys)}`;
    }
    if (issue.code === 'invalid_union' && issue.path.at(-1) !== undefined && issue.path[0] === 'servers') {
      // The union's discriminator: zod reports it at the entry or at its `transport` key.
      const at = issue.path.at(-1) === 'transport' ? issue.path : [...issue.path, 'transport'];
      return `${describePath(at)}: must be "stdio", "streamableHttp" or "sse"`;
    }
    return `${describePath(issue.path)}: ${issue.message}`;
  });
}

/** Every string in the raw config that must never appear in a diagnostic. */
function sensitiveStrings(raw: unknown, into: string[] = []): string[] {
  if (typeof raw === 'string') into.push(raw);
  else if (Array.isArray(raw)) for (const item of raw) sensitiveStrings(item, into);
  else if (isRecord(raw)) for (const value of Object.values(raw)) sensitiveStrings(value, into);
  return into;
}

export interface ParseConfigOptions {
  /**
   * Directory relative paths are resolved against (the config file's): `policy`, `plugins`,
   * `pluginDirs`, `agents`, `stateDir`, an `audit.sink` file. Default: the working directory.
   */
  baseDir?: string;
  /** The config file this was read from (kept, absolute, as `configFile`). */
  file?: string;
}

/** The config with every path it holds made absolute against `baseDir`. */
function withAbsolutePaths(config: GatewayConfig, baseDir: string, file: string | undefined): GatewayConfig {
  return {
    ...config,
    plugins: config.plugins.map((entry) => ({ ...entry, path: resolve(baseDir, entry.path) })),
    pluginDirs: config.pluginDirs.map((dir) => resolve(baseDir, dir)),
    ...(config.agents === undefined ? {} : { agents: { ...config.agents, path: resolve(baseDir, config.agents.path) } }),
    stateDir: resolve(baseDir, config.stateDir),
    ...(config.audit === undefined || config.audit.sink === 'stderr' ? {} : { audit: { ...config.audit, sink: resolve(baseDir, config.audit.sink) } }),
    ...(file === undefined ? {} : { configFile: resolve(file) }),
  };
}

/**
 * Parses a raw (already JSON-decoded) configuration, loads the policy it names (the embedded
 * default when it names none) and applies it: a config that tries to widen the policy is
 * invalid. Throws `ConfigError` listing every problem.
 */
export function parseConfig(raw: unknown, options: ParseConfigOptions = {}): Readonly<GatewayConfig> {
  const normalised = normaliseServers(raw);
  const parsed = gatewayConfigSchema.safeParse(normalised.value);
  const problems = [...normalised.problems];
  const ref = isRecord(raw) ? raw.policy : undefined;
  // A `policy` of the wrong type is a schema problem; there is then no policy to check against.
  const loaded = ref === undefined || typeof ref === 'string' ? loadPolicy(ref, options.baseDir ?? process.cwd()) : undefined;
  if (loaded !== undefined && !loaded.ok) problems.push(...loaded.problems);
  const policy = loaded?.ok ? loaded.policy : undefined;

  const inputs = parseInputs(isRecord(raw) ? raw.inputs : undefined);
  problems.push(...inputs.problems);

  let config: GatewayConfig | undefined;
  if (parsed.success) {
    problems.push(...semanticProblems(parsed.data));
    const servers = Object.fromEntries(Object.entries(parsed.data.servers).map(([name, server]) => [name, withReferences(name, server, inputs.inputs, problems)]));
    if (policy !== undefined) {
      const applied = applyPolicy({ ...parsed.data, servers }, policy);
      problems.push(...applied.problems);
      config = applied.config;
    }
  } else {
    problems.push(...schemaProblems(parsed.error));
    // Report the problems of the entries that did parse too: every problem at once.
    const rules = policy === undefined ? undefined : compilePolicyRules(policy);
    const servers = (normalised.value as { servers?: unknown }).servers;
    for (const [name, entry] of isRecord(servers) ? Object.entries(servers) : []) {
      const server = serverSchema.safeParse(entry);
      if (!server.success) continue;
      const compiled = withReferences(name, server.data, inputs.inputs, problems);
      problems.push(...serverProblems(name, compiled));
      if (rules !== undefined) problems.push(...serverPolicyProblems(name, compiled, rules));
    }
  }
  if (problems.length > 0 || config === undefined) {
    // Belt and braces: the diagnostics above are built from paths and zod's expectation messages,
    // which do not echo input; still, no configured server value may survive in them.
    // A value that is nothing but placeholders (`${workspaceFolder}`) holds no secret, and a problem names it.
    const redactor = new Redactor(serverValues(raw).filter((v) => v.length >= 6 && !/^(\$\{[^}]*\})+$/.test(v)));
    throw new ConfigError(problems.map((p) => redactor.redact(p)));
  }
  return deepFreeze(withAbsolutePaths(config, options.baseDir ?? process.cwd(), options.file));
}

/** The entry with its `${env:NAME}` references compiled (the operator's file only: env-references.ts). */
function withReferences(name: string, server: ServerConfig, inputs: InputVariables, problems: string[]): ServerConfig {
  const compiled = compileEnvReferences(name, server, inputs);
  problems.push(...compiled.problems);
  return compiled.references === undefined ? server : { ...server, envReferences: compiled.references };
}

const ENUM_FIELDS = new Set(['transport', 'type', 'mode', 'isolation', 'framing']);

/** The URLs outside server entries: the key set, the session store, this replica's address. */
function infrastructureUrls(raw: Record<string, unknown>): string[] {
  const jwks = isRecord(raw.auth) ? raw.auth.jwks : undefined;
  const fields = [isRecord(jwks) ? jwks.url : undefined, isRecord(raw.eventStore) ? raw.eventStore.url : undefined, isRecord(raw.cluster) ? raw.cluster.advertiseUrl : undefined];
  return fields.filter((value): value is string => typeof value === 'string');
}

/** Values inside server entries (commands, args, URLs, env and header values), not their keys; and every other URL. */
function serverValues(raw: unknown): string[] {
  if (!isRecord(raw)) return [];
  const out: string[] = infrastructureUrls(raw);
  for (const block of [raw.servers, raw.mcpServers]) {
    if (!isRecord(block)) continue;
    for (const entry of Object.values(block)) {
      if (!isRecord(entry)) continue;
      for (const [key, value] of Object.entries(entry)) {
        if (!ENUM_FIELDS.has(key)) sensitiveStrings(value, out);
      }
    }
  }
  return out;
}

/** Reads and parses a config file (JSON with comments, see config-text.ts). */
export async function loadConfigFile(path: string): Promise<Readonly<GatewayConfig>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    // The path is the operator's own argument: naming it shows which file was looked for, and where.
    const where = resolve(path);
    const hint = code === 'ENOENT' ? ': no such file' : code === 'EACCES' ? ': permission denied' : code === 'EISDIR' ? ': a directory, not a file' : '';
    throw new GatewayError('CONFIG_UNREADABLE', `cannot read config file ${where} (${code}${hint})`, { cause: error });
  }
  return parseConfig(parseConfigText(text), { baseDir: dirname(resolve(path)), file: path });
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
