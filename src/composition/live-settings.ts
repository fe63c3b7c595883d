/**
 * What a reload changes without a restart, compiled once per config and swapped whole: a
 * request, a list or a new upstream connection reads the old settings or the new, never a mix
 * (docs/operations.md, "Hot reload"). Its owners read it through the views below; none keeps a
 * copy, so a reload is one assignment instead of a setter per layer.
 */
import type { VisibilityFilter } from '../catalogue/merge.js';
import type { GatewayConfig, ServerConfig } from '../config/schema.js';
import type { BodyLimits } from '../inbound/body.js';
import { compileDeniedTools } from '../policy/denied-tools.js';
import { compileToolFilter, type ToolPredicate } from '../policy/tool-filter.js';
import { allowedEnvNames } from './gateway-policy.js';

export interface Settings {
  /** Each server's `enabledTools`/`disabledTools`, by server name (the audit's hidden-name reasons). */
  readonly toolFilters: ReadonlyMap<string, ToolPredicate>;
  /** Those filters AND the policy's `deniedTools`: what every merge shows. */
  readonly visibility: VisibilityFilter;
  readonly bodyLimits: BodyLimits;
  /** The variables `envHeaders` may read when a connection opens. */
  readonly allowedEnvNames: readonly string[];
}

export function compileSettings(config: Readonly<GatewayConfig>, servers: Readonly<Record<string, ServerConfig>>): Settings {
  const toolFilters = new Map(
    Object.entries(servers).map(([name, server]) => [name, compileToolFilter({ enabledTools: server.enabledTools, disabledTools: server.disabledTools })]),
  );
  const policyAllows = compileDeniedTools(config.policy.deniedTools);
  return {
    toolFilters,
    visibility: (server, name, exposed) => (toolFilters.get(server)?.(name) ?? false) && policyAllows(server, name, exposed),
    bodyLimits: { maxBytes: config.limits.maxBodyBytes, maxDepth: config.limits.maxJsonDepth },
    allowedEnvNames: allowedEnvNames(config),
  };
}

/** The tool filters as a check reads them: by server, and every server's name. */
export type ToolFilters = Pick<ReadonlyMap<string, ToolPredicate>, 'get' | 'keys'>;

export interface LiveSettings {
  readonly current: Settings;
  /** A reload's one write. */
  swap(next: Settings): void;
  /** The visibility of whatever settings are current when a list is merged. */
  readonly visibility: VisibilityFilter;
  /** Body limits, read per request. */
  readonly bodyLimits: BodyLimits;
  /** The current tool filters, read at each check. */
  readonly toolFilters: ToolFilters;
}

export function liveSettings(initial: Settings): LiveSettings {
  let settings = initial;
  return {
    get current() {
      return settings;
    },
    swap(next) {
      settings = next;
    },
    visibility: (server, name, exposed) => settings.visibility(server, name, exposed),
    bodyLimits: {
      get maxBytes() {
        return settings.bodyLimits.maxBytes;
      },
      get maxDepth() {
        return settings.bodyLimits.maxDepth;
      },
    },
    toolFilters: {
      get: (name) => settings.toolFilters.get(name),
      keys: () => settings.toolFilters.keys(),
    },
  };
}
