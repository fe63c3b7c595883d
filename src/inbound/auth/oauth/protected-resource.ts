/**
 * The protected resources an OAuth-configured gateway serves, one per MCP endpoint, and their
 * RFC 9728 metadata — pure functions of the public origin, the MCP path and the endpoint names.
 *
 * The MCP authorization spec ("Authorization Server Location", "Canonical Server URI") makes the
 * MCP endpoint's own URL the resource a token is bound to: the aggregate at `<origin><path>`, each
 * side channel at `<origin><path>/servers/<name>` and each agent at `<origin><path>/agents/<name>`
 * are different resources, and a token minted for one is refused by the others (RFC 8707). A
 * route below an endpoint (its HTTP+SSE `/sse` and `/messages`, the customisation list) is the
 * same resource as the endpoint; a route outside every endpoint (`/readyz`, `/metrics`) is the
 * aggregate's.
 *
 * Metadata lives at the well-known URI with the resource's path inserted after the host
 * (RFC 9728 §3.1): `<origin>/.well-known/oauth-protected-resource<path>`; the root well-known URI
 * (no path) answers the aggregate's metadata too, for clients that only try that one.
 */

export const WELL_KNOWN_PRM = '/.well-known/oauth-protected-resource';

/** The endpoint kinds that are resources of their own below the MCP path. */
export type EndpointKind = 'servers' | 'agents';

export interface ResourceLayout {
  /** The MCP path (`listen.path`): `''` for `/`, else `/mcp`. */
  base: string;
  /** Whether `<base>/<kind>/<name>` is an endpoint this gateway serves. */
  has(kind: EndpointKind, name: string): boolean;
}

export interface ProtectedResourceOptions {
  authorizationServers: readonly string[];
  scopes: readonly string[];
  resourceName?: string;
}

/** The path of the endpoint that owns `requestPath` (the aggregate's when no other does). */
export function endpointPathFor(layout: ResourceLayout, requestPath: string): string {
  const aggregate = layout.base === '' ? '/' : layout.base;
  if (layout.base !== '' && requestPath !== layout.base && !requestPath.startsWith(`${layout.base}/`)) return aggregate;
  const rest = requestPath.slice(layout.base.length).split('/');
  // rest: ['', kind, name, ...]
  const kind = rest[1];
  const raw = rest[2];
  if ((kind === 'servers' || kind === 'agents') && raw !== undefined && raw !== '') {
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      return aggregate;
    }
    if (layout.has(kind, name)) return `${layout.base}/${kind}/${raw}`;
  }
  return aggregate;
}

/** The canonical resource URI of an endpoint path: no trailing slash, no query or fragment. */
export function resourceUri(origin: string, endpointPath: string): string {
  return endpointPath === '/' ? origin : `${origin}${endpointPath}`;
}

/** Where the metadata of the resource at `endpointPath` is served (RFC 9728 §3.1). */
export function metadataPath(endpointPath: string): string {
  return endpointPath === '/' ? WELL_KNOWN_PRM : `${WELL_KNOWN_PRM}${endpointPath}`;
}

/**
 * The endpoint path whose metadata a well-known request asks for, or undefined when it names no
 * endpoint this gateway serves (the caller answers 404).
 */
export function endpointForMetadataPath(layout: ResourceLayout, wellKnownPath: string): string | undefined {
  if (wellKnownPath === WELL_KNOWN_PRM || wellKnownPath === `${WELL_KNOWN_PRM}/`) return layout.base === '' ? '/' : layout.base;
  if (!wellKnownPath.startsWith(`${WELL_KNOWN_PRM}/`)) return undefined;
  const asked = wellKnownPath.slice(WELL_KNOWN_PRM.length);
  const owner = endpointPathFor(layout, asked);
  // Only an endpoint itself has metadata; a route below one does not.
  return owner === asked || (owner === '/' && asked === '/') ? owner : undefined;
}

/** The RFC 9728 §2 document of one resource. */
export function protectedResourceMetadata(resource: string, options: ProtectedResourceOptions): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [...options.authorizationServers],
    ...(options.scopes.length > 0 ? { scopes_supported: [...options.scopes] } : {}),
    bearer_methods_supported: ['header'],
    ...(options.resourceName === undefined ? {} : { resource_name: options.resourceName }),
  };
}
