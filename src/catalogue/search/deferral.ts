/**
 * Which servers' tools are deferred (left out of `tools/list`, reachable through search), from
 * the three settings that speak to it, most specific first:
 *
 * 1. the server's own `defer` — `true` defers its tools and `false` always lists them directly,
 *    whatever the session or the global setting say: the operator pinned that server;
 * 2. the session's `deferTools` init option — a client that asks for deferral on or off gets it
 *    for every server that is not pinned;
 * 3. the global `catalogue.deferTools` — `false` (the default) lists everything, `true` defers
 *    everything, `{ above: N }` defers once the visible catalogue has more than N tools.
 *
 * The visible catalogue is every tool the session may see (after enablement and policy), pinned
 * servers included: `above` speaks of what a client would otherwise be handed. Pure: the caller
 * counts the tools.
 */

/** The global `catalogue.deferTools` setting. */
export type DeferToolsSetting = boolean | { readonly above: number };

/** A server's `defer`: `true`, `false`, or absent (`undefined`) to follow the session and global settings. */
export type ServerDeferSetting = boolean | undefined;

export interface DeferralInput {
  readonly global: DeferToolsSetting;
  /** Each server of the catalogue with its `defer` and its number of visible tools. */
  readonly servers: ReadonlyArray<{ readonly name: string; readonly defer?: ServerDeferSetting; readonly visibleTools: number }>;
  /** The session's `deferTools` init option; `undefined` when the client sent none. */
  readonly session?: boolean;
}

export interface DeferralDecision {
  /** Servers whose tools are deferred. */
  readonly deferred: ReadonlySet<string>;
  /** Visible tools of the deferred servers: when 0, there is nothing to search for. */
  readonly deferredTools: number;
  /** Where the default for unpinned servers came from, for diagnostics. */
  readonly source: 'session' | 'global';
}

/** Decides deferral per server (see the module comment for the precedence). */
export function decideDeferral(input: DeferralInput): DeferralDecision {
  const visible = input.servers.reduce((sum, s) => sum + s.visibleTools, 0);
  const byDefault = input.session ?? globalDefers(input.global, visible);
  const deferred = new Set<string>();
  let deferredTools = 0;
  for (const server of input.servers) {
    if (server.defer ?? byDefault) {
      deferred.add(server.name);
      deferredTools += server.visibleTools;
    }
  }
  return { deferred, deferredTools, source: input.session === undefined ? 'global' : 'session' };
}

function globalDefers(setting: DeferToolsSetting, visibleTools: number): boolean {
  return typeof setting === 'boolean' ? setting : visibleTools > setting.above;
}
