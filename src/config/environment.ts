/**
 * What a parsed config needs from the gateway's environment, judged before anything opens: every
 * variable an operator's server entry reads (`${env:NAME}` references, env-references.ts, and
 * `envHeaders`) is set — an unset one is a problem naming the variable and the field, never a
 * header sent short or a child started without it — a value bound for a header can be a header
 * value, and a `url` written with a reference is filled in and then judged by the one egress check
 * like any other URL (the policy judges the URL the gateway dials). `check`, the start and a
 * reload all run this (composition/preflight.ts). Problems never carry a value.
 */
import { egressTargetProblems } from '../policy/egress-target.js';
import { isSafeHeaderValue } from '../policy/outbound-headers.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import { expandTemplate } from './env-references.js';
import { serverEgressTarget } from './egress-targets.js';
import { deepFreeze } from './load.js';
import type { GatewayConfig, ServerConfig } from './schema.js';

export type Environment = Readonly<Record<string, string | undefined>>;

/** A header field's references: `servers.x.headers.Name`. */
const HEADER_FIELD = /^servers\.[^.]+\.headers\./;

function serverEnvironment(name: string, server: ServerConfig, env: Environment, problems: string[]): ServerConfig {
  const at = `servers.${name}`;
  const references = server.envReferences;
  for (const { variable, field } of references?.variables ?? []) {
    const value = env[variable];
    if (value === undefined) problems.push(`${field}: environment variable ${variable} is not set`);
    else if (HEADER_FIELD.test(field) && !isSafeHeaderValue(value)) problems.push(`${field}: environment variable ${variable} holds a character a header value cannot carry`);
  }
  if (server.transport === 'stdio') return server;
  for (const [header, variable] of Object.entries(server.envHeaders)) {
    const value = env[variable];
    if (value === undefined) problems.push(`${at}.envHeaders.${header}: environment variable ${variable} is not set`);
    else if (!isSafeHeaderValue(value)) problems.push(`${at}.envHeaders.${header}: environment variable ${variable} holds a character a header value cannot carry`);
  }
  if (references?.url === undefined) return server;
  const url = expandTemplate(references.url, (variable) => env[variable]);
  // An unset variable was reported above; the entry keeps its template and never runs.
  return url.ok ? { ...server, url: url.value } : server;
}

/**
 * The config with every `url` reference filled in, and the problems of its environment. The
 * egress check runs on each filled-in URL; a config with problems must not run.
 */
export function resolveEnvironment(config: Readonly<GatewayConfig>, env: Environment): { config: Readonly<GatewayConfig>; problems: string[] } {
  const problems: string[] = [];
  const servers: Record<string, ServerConfig> = {};
  let changed = false;
  for (const [name, server] of Object.entries(config.servers)) {
    servers[name] = serverEnvironment(name, server, env, problems);
    changed ||= servers[name] !== server;
  }
  if (!changed) return { config, problems };
  const rules = compilePolicyRules(config.policy);
  for (const [name, server] of Object.entries(servers)) {
    if (server === config.servers[name] || server.transport === 'stdio') continue;
    problems.push(...egressTargetProblems(serverEgressTarget(name, server)!, rules));
  }
  return { config: deepFreeze({ ...config, servers }), problems };
}
