/**
 * What the gateway compiles from its config once, at start, before any part opens: the tool
 * visibility predicate, the variables `envHeaders` may read, the bind rule and the
 * authenticator. Each refuses a bad config with an operator-actionable error.
 */
import { ConfigError, GatewayError } from '../errors.js';
import { checkBind } from '../inbound/bind-check.js';
import { checkResourceTransport } from '../inbound/auth/oauth/transport-security.js';
import type { Authenticator } from '../inbound/auth/authenticate.js';
import type { GatewayConfig, ServerConfig } from '../config/schema.js';
import type { VisibilityFilter } from '../catalogue/merge.js';
import type { Logger } from '../observability/logger.js';
import type { LoadedPlugins } from '../plugins/plugin-servers.js';
import { compileDeniedTools } from '../policy/denied-tools.js';
import { compilePolicyRules } from '../policy/policy-rules.js';
import { compileToolFilter } from '../policy/tool-filter.js';

/** Per-server enabled/disabled lists AND the policy's denied globs: one predicate for list and call. */
/**
 * The variables `envHeaders` and `${env:NAME}` header references may read at run time: those the
 * config names that the policy allows (parseConfig refused any other). The connector never reads
 * a variable not listed here.
 */
export function allowedEnvNames(config: Readonly<GatewayConfig>): string[] {
  const rules = compilePolicyRules(config.policy);
  const names = new Set<string>();
  for (const server of Object.values(config.servers)) {
    if (server.transport === 'stdio') continue;
    for (const variable of [...Object.values(server.envHeaders), ...(server.envReferences?.variables ?? []).map((use) => use.variable)]) {
      if (rules.envHeaderAllowed(variable)) names.add(variable);
    }
  }
  return [...names];
}

/** One line per plugin that did not load cleanly (never a value from its files), and directory problems. */
export function logPlugins(loaded: LoadedPlugins, logger: Logger): void {
  for (const problem of loaded.problems) logger.warn({ problem }, 'plugin directory problem');
  for (const plugin of loaded.plugins) {
    const running = plugin.servers.filter((s) => s.runs).length;
    if (plugin.load.kind === 'loaded') logger.info({ plugin: plugin.declaration.name, servers: running }, 'plugin loaded');
    else logger.warn({ plugin: plugin.declaration.name, load: plugin.load.kind, servers: running, reason: plugin.load.message }, 'plugin not fully loaded');
  }
}

/**
 * The bind rule: a non-loopback address needs authentication or `acknowledgedNoAuth`; with
 * `oauth`, a resource other machines reach must be an `https:` one (oauth/transport-security.ts).
 */
export function refuseBind(address: string, config: Readonly<GatewayConfig>): GatewayError | undefined {
  const bind = checkBind({ address, authConfigured: config.auth !== undefined, acknowledgedNoAuth: config.policy.acknowledgedNoAuth });
  if (!bind.ok) return new GatewayError('BIND_REFUSED', bind.message);
  if (config.auth?.kind !== 'oauth') return undefined;
  const transport = checkResourceTransport({ address, publicUrl: config.listen.publicUrl });
  return transport.ok ? undefined : new GatewayError('BIND_REFUSED', transport.message);
}

/**
 * Compiles the `auth` block once, at start: a token variable that is unset is a configuration
 * error naming the variable (never its value), before any upstream is started.
 */
export async function compileAuthentication(
  config: Readonly<GatewayConfig>,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Promise<Authenticator | undefined> {
  if (config.auth === undefined) return undefined;
  // Loaded only when configured: the JWT stack (jose) costs memory a loopback gateway never uses.
  const { compileAuthenticator } = await import('../inbound/auth/authenticate.js');
  try {
    return compileAuthenticator(config.auth, { readEnv: (name) => env[name], logger });
  } catch (error) {
    if (error instanceof TypeError) throw new ConfigError([`auth: ${error.message}`]);
    throw error;
  }
}
