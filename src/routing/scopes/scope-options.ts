/**
 * What an endpoint gives the routing scopes of its requests, both eras' (`SessionScope` in
 * scopes.ts, `StatelessScope` in stateless-scope.ts, and the scope of the servers a 2025 client
 * brings, session-servers-scope.ts): compiled once per endpoint when it is built
 * (composition/endpoints.ts) and shared by every request and session of it.
 */
import type { CatalogueOptions } from '../../catalogue/catalogue.js';
import type { VisibilityFilter } from '../../catalogue/merge.js';
import type { ToolSurface } from '../../catalogue/surface/tool-surface.js';
import type { SessionServersGate } from '../../config/session-servers.js';
import type { Logger } from '../../observability/logger.js';
import type { RequestLimiter } from '../../policy/request-limits.js';
import type { UserTokens } from '../../upstream/credentials/user-tokens.js';
import type { UpstreamRegistry } from '../../upstream/registry.js';
import type { ServerRoster } from '../../upstream/server-roster.js';
import type { GatewayResources } from '../gateway-resources.js';
import type { TaskTable } from '../tasks/task-table.js';
import type { ServerVisibility } from '../visibility.js';

export interface ScopeOptions {
  registry: UpstreamRegistry;
  /** The servers this endpoint shows, in merge order: the registry's roster grows when a reload adds one. */
  servers: ServerRoster;
  catalogue: Omit<CatalogueOptions, 'logger'>;
  /** Deferral, meta-tools and `tools/list` pages of this endpoint; absent: the merged list as is. */
  tools?: ToolSurface;
  logger: Logger;
  /** 2026 clients: how long a call suspended for input waits for the client's retry (default 5 min). */
  inputTtlMs?: number;
  /** The endpoint's tasks (routing/tasks/); absent: tasks are not offered. */
  tasks?: TaskTable;
  /** Which servers each caller sees (enablement, visibility.ts); absent: every server, always. */
  visibility?: ServerVisibility;
  /** Resources the gateway itself serves on this endpoint (gateway-resources.ts); absent: none. */
  gatewayResources?: GatewayResources;
  /** The policy's request rates per principal; absent: not limited. */
  limiter?: RequestLimiter;
  /** Judges and filters the servers a 2025 client brings in `initialize` (session-servers-scope.ts); absent: the default policy's (none). */
  sessionServers?: SessionServersOptions;
  /** Sessions' own tokens for `perUser` servers (session-credentials.ts); absent: those servers get none. */
  userTokens?: UserTokens;
}

/** What an endpoint knows about servers its 2025 clients may bring. */
export interface SessionServersOptions {
  /** The policy's judgement of an `initialize` (config/session-servers.ts). */
  readonly gate: SessionServersGate;
  /** The policy's denied-tool globs, for their tools as for every other. */
  readonly policyAllows: VisibilityFilter;
}
