/**
 * A catalogue's options narrowed to what one caller's access profile lets it see
 * (policy/access-policy.ts): tools by the profile's tool decision on top of the endpoint's own
 * filter, prompts, resources and templates by its server decision. The same predicate filters
 * the list and re-checks every call (router.ts), so hidden means not callable. A narrowed view's
 * lists are `private` to 2026 clients: a cache must never carry them to another caller.
 */
import type { CatalogueOptions } from '../catalogue/catalogue.js';
import { seesAll, showsServer, type AccessProfile } from '../policy/access-policy.js';

export type ViewOptions = Omit<CatalogueOptions, 'logger'>;

export function narrowedView(base: ViewOptions, access: AccessProfile | undefined): ViewOptions {
  if (seesAll(access)) return base;
  const endpointAllows = base.toolFilter;
  const baseParts = base.serverParts;
  return {
    ...base,
    toolFilter: (server, name, exposed) => endpointAllows(server, name, exposed) && access.tool(server, name, exposed).allowed,
    serverParts: (server) => (baseParts?.(server) ?? true) && showsServer(access, server),
    narrowed: true,
  };
}
