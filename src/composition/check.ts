/**
 * `portcullis check`: the rules the start runs (composition/preflight.ts) on a parsed config, and,
 * with `--resolve`, the ones that need the network: which HTTP upstreams the egress guard will
 * refuse once their DNS names are looked up (net/upstream-reachability.ts). Problems fail the
 * check (exit 1), as they fail the start; warnings are printed and leave it passing.
 */
import type { GatewayConfig } from '../config/schema.js';
import type { Environment } from '../config/environment.js';
import { systemResolve } from '../net/resolve-once.js';
import { blockedUpstreamWarnings } from '../net/upstream-reachability.js';
import { preflight } from './preflight.js';

export interface CheckOptions {
  /** `--resolve`: look the upstreams' DNS names up too. */
  resolve: boolean;
  /** Where the verdict goes (stdout) and where problems and warnings go (stderr). */
  out: (text: string) => void;
  err: (text: string) => void;
}

/** Runs the check; resolves with the exit code. */
export async function runCheck(parsed: Readonly<GatewayConfig>, env: Environment, options: CheckOptions): Promise<number> {
  const { config, problems, warnings } = preflight(parsed, env);
  if (problems.length > 0) {
    options.err(`portcullis: ${problems.length} problem(s) in the configuration:\n`);
    for (const problem of problems) options.err(`  - ${problem}\n`);
    return 1;
  }
  // Warnings, not problems: the config is valid, but these upstreams will be refused when dialled.
  const blocked = await blockedUpstreamWarnings(config, options.resolve ? { resolve: systemResolve } : {});
  const all = [...warnings, ...blocked];
  for (const warning of all) options.err(`portcullis: warning: ${warning}\n`);
  options.out(`configuration ok: ${Object.keys(config.servers).length} server(s)${all.length > 0 ? `, ${all.length} warning(s)` : ''}\n`);
  return 0;
}
