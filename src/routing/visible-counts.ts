/**
 * What one caller is shown of each server, counted through the very catalogue and tool surface
 * its requests list from (a scope's `catalogue` and `tools`), so the numbers are the client's and
 * never a second computation beside it: tools after the servers' filters, the policy's denied
 * tools and the caller's access rules, split into those `tools/list` shows and those deferral
 * leaves to `search_tools`; prompts, resources and resource templates as they list. The admin
 * page shows them (docs/operations.md, "Admin page").
 */
import type { RouteScope } from './router.js';

export type VisibleCounts =
  | { readonly tools: number; readonly deferredTools: number; readonly prompts: number; readonly resources: number; readonly resourceTemplates: number }
  /** Its list could not be fetched just now (down, starting, or needing a credential the caller lacks): left out of the caller's lists. */
  | { readonly unavailable: true };

/**
 * Counts per server the scope's catalogue merges now; a server it does not merge (disabled by
 * enablement for this caller, or reached per principal with no list of its own) is absent.
 */
export async function visibleCounts(scope: Pick<RouteScope, 'catalogue' | 'tools'>): Promise<Map<string, VisibleCounts>> {
  const { catalogue } = scope;
  const merged = await catalogue.tools();
  const servers = catalogue.servers;
  // Read before the other lists merge: each merge notes the servers it left out.
  const unavailable = new Set(servers.filter((server) => catalogue.leftOut(server)));
  const [prompts, resources, templates] = await Promise.all([catalogue.prompts(), catalogue.resources(), catalogue.templates()]);
  const shown = scope.tools?.shown(merged);
  const tally = (servers: Iterable<string>) => {
    const counts = new Map<string, number>();
    for (const server of servers) counts.set(server, (counts.get(server) ?? 0) + 1);
    return counts;
  };
  const toolsOf = tally([...merged.index.values()].map((target) => target.server));
  const promptsOf = tally([...prompts.index.values()].map((target) => target.server));
  const resourcesOf = tally(resources.index.values());
  const templatesOf = tally(templates.routes.map((route) => route.server));
  const counts = new Map<string, VisibleCounts>();
  for (const server of servers) {
    if (unavailable.has(server)) {
      counts.set(server, { unavailable: true });
      continue;
    }
    const split = shown?.get(server);
    const tools = toolsOf.get(server) ?? 0;
    counts.set(server, {
      tools: split?.listed ?? tools,
      deferredTools: split?.deferred ?? 0,
      prompts: promptsOf.get(server) ?? 0,
      resources: resourcesOf.get(server) ?? 0,
      resourceTemplates: templatesOf.get(server) ?? 0,
    });
  }
  return counts;
}
