/**
 * Why a tool or prompt name that a client called is not in its catalogue, for the audit log's
 * `decision` (docs/operations.md, "Audit log"): `disabled` (its server is declared but not run —
 * a plugin configured `enabled: false`), `denied` (the policy's `deniedTools`, or one of its
 * `access` rules for this caller — then `rule` names it), `filtered` (the server's
 * `enabledTools`/`disabledTools`), or `undefined` (no such name: the call was allowed
 * and failed as unknown). The client still gets the one "unknown" answer (a filter cannot be
 * probed); only the operator's audit line tells them apart.
 *
 * Compiled once per endpoint; `filters` is read at each check (a reload may add a server or move
 * its filters). The name is split at the separator after the longest server name it starts with; a shortened name (64-character rule) cannot be split and counts
 * as unknown.
 */
import type { AccessProfile } from './access-policy.js';
import type { PolicyToolCheck } from './denied-tools.js';
import type { ToolPredicate } from './tool-filter.js';

export type HiddenReason = 'filtered' | 'denied' | 'disabled';

export interface HiddenReasonOptions {
  /** Each running server's `enabledTools`/`disabledTools` predicate on upstream names (read at each check). */
  filters: Pick<ReadonlyMap<string, ToolPredicate>, 'get' | 'keys'>;
  /** Servers declared but not run. */
  disabled: ReadonlySet<string>;
  policyAllows: PolicyToolCheck;
  /** The endpoint's separator (`null`: names are not namespaced). */
  separator: string | null;
  /** A side channel's one server (its names are unprefixed). */
  server?: string;
}

export interface HiddenName {
  reason: HiddenReason;
  server: string;
  /** The `access` rule that hid it from this caller (its name, `rules[i]`, or `default`). */
  rule?: string;
}

/**
 * Why the name is hidden and the server it names; `undefined` when it is not a hidden name.
 * `access`: the caller's profile under the policy's `access` rules, when they apply.
 */
export type HiddenReasonCheck = (kind: 'tool' | 'prompt', exposed: string, access?: AccessProfile) => HiddenName | undefined;

export function compileHiddenReason(options: HiddenReasonOptions): HiddenReasonCheck {
  // Only a refused name is checked: sorting the few server names then costs nothing a call waits on.
  const known = () => [...options.filters.keys(), ...options.disabled].sort((a, b) => b.length - a.length);
  const split = (exposed: string): { server: string; name: string } | undefined => {
    if (options.server !== undefined) return { server: options.server, name: exposed };
    const separator = options.separator;
    if (separator === null) return undefined;
    const server = known().find((s) => exposed.startsWith(`${s}${separator}`));
    return server === undefined ? undefined : { server, name: exposed.slice(server.length + separator.length) };
  };
  const byAccess = (server: string, decision: { allowed: boolean; rule: string } | undefined): HiddenName | undefined =>
    decision === undefined || decision.allowed ? undefined : { reason: 'denied', server, rule: decision.rule };
  return function hiddenReason(kind, exposed, access) {
    const parts = split(exposed);
    if (parts === undefined || parts.name === '') return undefined;
    const { server, name } = parts;
    if (options.disabled.has(server)) return { reason: 'disabled', server };
    const filter = options.filters.get(server);
    if (filter === undefined) return undefined;
    // Prompts have no filters: a server that does not run, or the caller's access rules, hide them.
    if (kind === 'prompt') return byAccess(server, access?.serverParts(server));
    if (!options.policyAllows(server, name, exposed)) return { reason: 'denied', server };
    if (!filter(name)) return { reason: 'filtered', server };
    return byAccess(server, access?.tool(server, name, exposed));
  };
}
