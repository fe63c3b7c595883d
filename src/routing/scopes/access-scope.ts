/**
 * A 2025 session judged per request: every request of a session carries its own token, and the
 * policy's access rules judge it by that token's claims and scopes (docs/authorization.md, "Who
 * may see and use what") — a later token of the same principal with other groups or fewer scopes
 * narrows what that request lists and may call, whatever the token that opened the session allowed.
 *
 * - {@link ProfileCatalogues}: a session's merged lists, one catalogue per access profile it was
 *   called with (built on first use, a few kept), so a list built for one profile is never
 *   served to another;
 * - {@link scopeAtAccess}: the session's routing scope as one request sees it — the same
 *   connections, subscriptions, tasks and rates, with the catalogue (and the gateway's own
 *   resources) of that request's profile.
 */
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { AccessProfile } from '../../policy/access-policy.js';
import type { CallerResources } from '../gateway-resources.js';
import type { RouteScope } from '../router.js';

/** The key of a profile's lists; undefined: the policy has no access rules. */
export function profileKey(access: AccessProfile | undefined): string {
  return access?.key ?? '';
}

/** Profiles a session keeps lists for at once; a session alternating between more rebuilds them. */
const MAX_PROFILES = 4;

export class ProfileCatalogues {
  private readonly built = new Map<string, Catalogue>();

  constructor(private readonly build: (access: AccessProfile | undefined) => Catalogue) {}

  for(access: AccessProfile | undefined): Catalogue {
    const key = profileKey(access);
    let catalogue = this.built.get(key);
    if (catalogue === undefined) {
      catalogue = this.build(access);
      if (this.built.size >= MAX_PROFILES) this.built.delete(this.built.keys().next().value as string);
    } else {
      this.built.delete(key); // re-inserted below: insertion order is recency order
    }
    this.built.set(key, catalogue);
    return catalogue;
  }
}

/**
 * `scope` as a request with `access` sees it: its own catalogue and gateway resources, everything
 * else the scope's. Every member of `RouteScope` is named here (they are all required), so one
 * added later cannot be left out for narrowed requests.
 */
export function scopeAtAccess(
  scope: RouteScope,
  at: { catalogue: Catalogue; access: AccessProfile | undefined; gatewayResources: CallerResources | undefined },
): RouteScope {
  const bound = <F extends (...args: never[]) => unknown>(fn: F | undefined): F | undefined => fn?.bind(scope) as F | undefined;
  return {
    servers: scope.servers,
    catalogue: at.catalogue,
    access: at.access,
    gatewayResources: at.gatewayResources,
    tools: scope.tools,
    tasks: scope.tasks,
    inputBridge: scope.inputBridge,
    admitTool: scope.admitTool,
    withLink: (server, fn) => scope.withLink(server, fn),
    withTaskLink: bound(scope.withTaskLink),
    noteSubscription: bound(scope.noteSubscription),
    broadcast: bound(scope.broadcast),
    setLogLevel: bound(scope.setLogLevel),
  };
}
