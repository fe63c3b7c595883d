/**
 * Applying the policy to a schema-valid config (docs/decisions.md, "Trust layers": a lower layer
 * can narrow what a higher one allows, never widen it). Every widening attempt is a configuration
 * problem that names the server and field; none echoes a value (a URL, a command, an env or header
 * value). Every URL the config names goes through the one egress check (`policy/egress-target.ts`).
 * Limits the config leaves out take the policy's values.
 */
import { egressTargetProblems } from '../policy/egress-target.js';
import { compilePolicyRules, type PolicyRules } from '../policy/policy-rules.js';
import type { Policy } from '../policy/policy-schema.js';
import type { StdioRules } from '../policy/stdio-rules.js';
import { infrastructureEgressTargets, serverEgressTarget } from './egress-targets.js';
import type { EffectiveLimits, EventStoreSettings, GatewayConfig, GatewayConfigFile, ServerConfig, SessionLimits, StdioServerConfig } from './schema.js';
import { gatewayClientOf } from './gateway-client.js';

/** The state directory when the config names none, relative to the config file's directory. */
export const DEFAULT_STATE_DIR = '.portcullis';

/** How long a session's idle stdio child lives by default: long enough for a pause, short against a pile-up. */
const DEFAULT_CHILD_IDLE_TIMEOUT_MS = 5 * 60_000;

function stdioProblems(at: string, server: StdioServerConfig, rules: StdioRules): string[] {
  const problems: string[] = [];
  if (!rules.commandAllowed(server.command)) problems.push(`${at}.command: not a command the policy's stdioCommands allows`);
  if (server.cwd !== undefined && !rules.cwdAllowed) problems.push(`${at}.cwd: the policy does not allow choosing the working directory`);
  for (const variable of Object.keys(server.env)) {
    const verdict = rules.envVerdict(variable);
    if (verdict === 'denied') problems.push(`${at}.env.${variable}: the policy forbids setting this variable`);
    else if (verdict === 'unlisted') problems.push(`${at}.env.${variable}: not a variable the policy's stdioAllowedEnv allows`);
  }
  return problems;
}

/**
 * A `${env:NAME}` reference sends the gateway's variable out of the process (to an upstream, or
 * into a child): the rule `envHeaders` obeys, `envHeaderNames`, decides which it may read.
 */
function referenceProblems(server: ServerConfig, rules: PolicyRules): string[] {
  return (server.envReferences?.variables ?? [])
    .filter(({ variable }) => !rules.envHeaderAllowed(variable))
    .map(({ variable, field }) => `${field}: the policy does not allow reading the variable ${variable} (policy envHeaderNames)`);
}

/** Problems of one server entry under the policy's rules. */
export function serverPolicyProblems(name: string, server: ServerConfig, rules: PolicyRules): string[] {
  const at = `servers.${name}`;
  if (server.transport === 'stdio') return [...stdioProblems(at, server, rules.stdio), ...referenceProblems(server, rules)];
  // A URL with a reference is judged once it is filled in (environment.ts), before anything dials it.
  const problems = server.envReferences?.url === undefined ? egressTargetProblems(serverEgressTarget(name, server)!, rules) : [];
  problems.push(...referenceProblems(server, rules));
  if (server.transport === 'sse' && !rules.sseUpstreamAllowed) {
    problems.push(`${at}.transport: the policy does not allow "sse" upstreams (policy legacySse.upstream is false)`);
  }
  for (const [header, variable] of Object.entries(server.envHeaders)) {
    if (!rules.envHeaderAllowed(variable)) {
      problems.push(`${at}.envHeaders.${header}: the policy does not allow reading this variable`);
    }
  }
  // A client secret leaves the host like an envHeaders value does: the same rule.
  const secretEnv = gatewayClientOf(server)?.clientSecretEnv;
  if (secretEnv !== undefined && !rules.envHeaderAllowed(secretEnv)) {
    problems.push(`${at}.upstreamAuth.clientSecretEnv: the policy does not allow reading this variable`);
  }
  return problems;
}

/** The configured value if it is within the ceiling (else a problem), or the ceiling itself. */
function capped(
  field: string,
  configured: number | undefined,
  ceiling: number,
  policyField: string,
  problems: string[],
): number {
  if (configured === undefined) return ceiling;
  if (configured > ceiling) {
    problems.push(`${field}: exceeds the policy limit (policy limits.${policyField} is ${ceiling})`);
    return ceiling;
  }
  return configured;
}

/**
 * Checks a schema-valid config against its policy and resolves it into the config the gateway
 * runs. `problems` is empty when the config stays within the policy.
 */
/** Tool-integrity modes from weakest to strictest. */
const INTEGRITY_ORDER = ['off', 'warn', 'hold'] as const;

export function applyPolicy(
  file: GatewayConfigFile,
  policy: Readonly<Policy>,
): { config: GatewayConfig; problems: string[] } {
  const rules = compilePolicyRules(policy);
  const problems = [
    ...Object.entries(file.servers).flatMap(([name, server]) => serverPolicyProblems(name, server, rules)),
    ...infrastructureEgressTargets(file).flatMap((target) => egressTargetProblems(target, rules)),
  ];
  const ceilings = policy.limits;
  const max = capped('sessions.max', file.sessions.max, ceilings.maxSessions, 'maxSessions', problems);
  const idleTimeoutMs = capped('sessions.idleTimeoutMs', file.sessions.idleTimeoutMs, ceilings.sessionIdleTimeoutMs, 'sessionIdleTimeoutMs', problems);
  const perPrincipal = capped('sessions.maxPerPrincipal', file.sessions.maxPerPrincipal, ceilings.maxSessionsPerPrincipal, 'maxSessionsPerPrincipal', problems);
  const sessions: SessionLimits = {
    max,
    idleTimeoutMs,
    // Without authentication every client is one anonymous principal: a quota below `max` would
    // only shrink the gateway for its one user, so the cap is `max` unless the config says otherwise.
    maxPerPrincipal: file.auth === undefined && file.sessions.maxPerPrincipal === undefined ? max : perPrincipal,
    initializePerMinute: capped('sessions.initializePerMinute', file.sessions.initializePerMinute, ceilings.initializePerMinute, 'initializePerMinute', problems),
    maxChildrenPerServer: capped('sessions.maxChildrenPerServer', file.sessions.maxChildrenPerServer, ceilings.maxSessionChildrenPerServer, 'maxSessionChildrenPerServer', problems),
    childIdleTimeoutMs: file.sessions.childIdleTimeoutMs ?? Math.min(DEFAULT_CHILD_IDLE_TIMEOUT_MS, idleTimeoutMs),
  };
  const limits: EffectiveLimits = {
    maxBodyBytes: capped('limits.maxBodyBytes', file.limits.maxBodyBytes, ceilings.maxBodyBytes, 'maxBodyBytes', problems),
    maxJsonDepth: capped('limits.maxJsonDepth', file.limits.maxJsonDepth, ceilings.maxJsonDepth, 'maxJsonDepth', problems),
    maxHeaderBytes: capped('limits.maxHeaderBytes', file.limits.maxHeaderBytes, ceilings.maxHeaderBytes, 'maxHeaderBytes', problems),
    maxUpstreamMessageBytes: capped('limits.maxUpstreamMessageBytes', file.limits.maxUpstreamMessageBytes, ceilings.maxUpstreamMessageBytes, 'maxUpstreamMessageBytes', problems),
  };
  const { maxSessionBytes: sessionBytes, maxTotalBytes: totalBytes, ...store } = file.eventStore;
  const maxTotalBytes = capped('eventStore.maxTotalBytes', totalBytes, ceilings.maxHistoryBytes, 'maxHistoryBytes', problems);
  const eventStore: EventStoreSettings = {
    ...store,
    // One session can never be promised more than the whole process keeps.
    maxSessionBytes: Math.min(capped('eventStore.maxSessionBytes', sessionBytes, ceilings.maxSessionHistoryBytes, 'maxSessionHistoryBytes', problems), maxTotalBytes),
    maxTotalBytes,
  };
  const minimumMode = policy.toolIntegrity.minimumMode;
  const askedMode = file.toolIntegrity.mode;
  if (askedMode !== undefined && INTEGRITY_ORDER.indexOf(askedMode) < INTEGRITY_ORDER.indexOf(minimumMode)) {
    problems.push(`toolIntegrity.mode: "${askedMode}" is weaker than the policy's toolIntegrity.minimumMode "${minimumMode}"`);
  }
  const toolIntegrity = { mode: askedMode ?? minimumMode, trustOnFirstUse: file.toolIntegrity.trustOnFirstUse };
  const { policy: _ref, stateDir, toolIntegrity: _integrity, ...rest } = file;
  // Paths stay as written here; parseConfig resolves them against the config file's directory.
  return { config: { ...rest, stateDir: stateDir ?? DEFAULT_STATE_DIR, policy, sessions, limits, eventStore, toolIntegrity }, problems };
}
