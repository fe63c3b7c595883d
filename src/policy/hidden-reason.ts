/**
 * Why a tool or prompt name that a client called is not in its catalogue, for the audit log's
 * `decision` (docs/operations.md, "Audit log"): `disabled` (its server is declared but not run —
 * a plugin configured `enabled: false`), `denied` (the policy's `deniedTools`), `filtered` (the
 * server's `enabledTools`/`disabledTools`), or `undefined` (no such name: the call was allowed
 * and failed as unknown). The client still gets the one "unknown" answer (a filter cannot be
 * probed); only the operator's audit line tells them apart.
 *
 * Pure and compiled once per endpoint. The name is split at the separator after the longest
 * server name it starts with; a shortened name (64-character rule) cannot be split and counts
 * as unknown.
 */
import type { PolicyToolCheck } from './denied-tools.js';
import type { ToolPredicate } from './tool-filter.js';

export type HiddenReason = 'filtered' | 'denied' | 'disabled';

export interface HiddenReasonOptions {
  /** Each running server's `enabledTools`/`disabledTools` predicate on upstream names. */
  filters: ReadonlyMap<string, ToolPredicate>;
  /** Servers declared but not run. */
  disabled: ReadonlySet<string>;
  policyAllows: PolicyToolCheck;
  /** The endpoint's separator (`null`: names are not namespaced). */
  separator: string | null;
  /** A side channel's one server (its names are unprefixed). */
  server?: string;
}

/** Why the name is hidden and the server it names; `undefined` when it is not a hidden name. */
export type HiddenReasonCheck = (kind: 'tool' | 'prompt', exposed: string) => { reason: HiddenReason; server: string } | undefined;

export function compileHiddenReason(options: HiddenReasonOptions): HiddenReasonCheck {
  const known = [...options.filters.keys(), ...options.disabled].sort((a, b) => b.length - a.length);
  const split = (exposed: string): { server: string; name: string } | undefined => {
    if (options.server !== undefined) return { server: options.server, name: exposed };
    const separator = options.separator;
    if (separator === null) return undefined;
    const server = known.find((s) => exposed.startsWith(`${s}${separator}`));
    return server === undefined ? undefined : { server, name: exposed.slice(server.length + separator.length) };
  };
  return function hiddenReason(kind, exposed) {
    const parts = split(exposed);
    if (parts === undefined || parts.name === '') return undefined;
    if (options.disabled.has(parts.server)) return { reason: 'disabled', server: parts.server };
    // Prompts have no filters; only a server that does not run hides them.
    if (kind === 'prompt') return undefined;
    const filter = options.filters.get(parts.server);
    if (filter === undefined) return undefined;
    if (!options.policyAllows(parts.server, parts.name, exposed)) return { reason: 'denied', server: parts.server };
    return filter(parts.name) ? undefined : { reason: 'filtered', server: parts.server };
  };
}
