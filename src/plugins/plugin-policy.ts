/**
 * The policy applied to one plugin server (docs/plugins.md, "Left to the wiring"; policies/README.md,
 * `plugins.stdio`). Plugins are the least trusted layer: what the policy allows a config entry, a
 * plugin gets at most, and its stdio servers only when `plugins.stdio` says so.
 *
 * - stdio: refused outright when `plugins.stdio` is false; otherwise `stdioCommands` judges the
 *   command as it will run (a `./` command by its resolved absolute path), the env rules judge
 *   every variable the plugin set, and `stdioAllowCwd: false` admits only the plugin root as the
 *   working directory. `PLUGIN_ROOT` / `PLUGIN_DATA` (and the Claude Code spellings) are set by
 *   the gateway to paths it computed, not chosen by the plugin, so they pass.
 * - remote: `sse` (HTTP+SSE) only where `legacySse.upstream` allows it; the one egress check every configured URL goes through (`upstreamHosts`, the URL
 *   rule); the reader already fixed `allowPrivateNetwork: false`, and this refuses any other value.
 *
 * Pure: plain values in, a result out. Messages name the field and never a value.
 */
import type { ServerConfig } from '../config/schema.js';
import { egressTargetProblems } from '../policy/egress-target.js';
import type { PolicyRules } from '../policy/policy-rules.js';

export type PluginPolicyVerdict = { readonly ok: true } | { readonly ok: false; readonly field: string; readonly message: string };

export interface PluginPolicyInput {
  readonly config: ServerConfig;
  /** The plugin root (realpath): the only working directory `stdioAllowCwd: false` admits. */
  readonly root: string;
  /** Variables the gateway itself sets on the plugin's children. */
  readonly reservedEnv: readonly string[];
  /** The policy's `plugins.stdio`. */
  readonly stdioAllowed: boolean;
  readonly rules: PolicyRules;
}

const OK: PluginPolicyVerdict = Object.freeze({ ok: true });

function refuse(field: string, message: string): PluginPolicyVerdict {
  return { ok: false, field, message };
}

/** Whether the policy lets this plugin server run, and if not, the field that stops it. */
export function checkPluginServer(input: PluginPolicyInput): PluginPolicyVerdict {
  const { config, rules } = input;
  if (config.transport === 'stdio') {
    if (!input.stdioAllowed) return refuse('type', 'stdio servers from plugins are not allowed by the policy (plugins.stdio is false)');
    if (!rules.stdio.commandAllowed(config.command)) return refuse('command', "not a command the policy's stdioCommands allows");
    if (!rules.stdio.cwdAllowed && config.cwd !== undefined && config.cwd !== input.root) {
      return refuse('cwd', 'the policy does not allow choosing the working directory (stdioAllowCwd is false)');
    }
    for (const name of Object.keys(config.env)) {
      if (input.reservedEnv.includes(name)) continue;
      const verdict = rules.stdio.envVerdict(name);
      if (verdict === 'denied') return refuse(`env.${name}`, 'the policy forbids setting this variable');
      if (verdict === 'unlisted') return refuse(`env.${name}`, "not a variable the policy's stdioAllowedEnv allows");
    }
    return OK;
  }
  if (config.transport === 'sse' && !rules.sseUpstreamAllowed) {
    return refuse('type', 'the policy does not allow "sse" upstreams (policy legacySse.upstream is false)');
  }
  if (config.allowPrivateNetwork) return refuse('url', 'plugin servers never reach private networks');
  const problems = egressTargetProblems(
    { field: 'url', url: config.url, protocol: 'http', tier: 'server', allowPrivateNetwork: false, allowPrivateNetworkField: 'allowPrivateNetwork' },
    rules,
  );
  const [first] = problems;
  return first === undefined ? OK : refuse('url', first.replace(/^url: /, ''));
}
