/**
 * The routes of an OAuth-configured gateway's protected resources: RFC 9728 metadata at the
 * well-known URIs (served before authentication — a client reads them to learn how to get a
 * token), and the target every authenticated request is judged against.
 *
 * The public origin is `listen.publicUrl` when configured; otherwise the request's own origin as
 * the client addressed it (its `Host`, already held to the Host allowlist by the edge guard),
 * so that a local client reaching `http://localhost:8787/mcp` is told that very URI as the
 * resource to ask a token for. Behind a proxy or load balancer, set `listen.publicUrl`: a
 * resource URI must not depend on which name a client used.
 */
import type { Context, Hono } from 'hono';
import type { OAuthAuthConfig } from '../../../config/auth-schema.js';
import { refusal } from '../../../errors.js';
import { incomingMessageOf } from '../../incoming-body.js';
import type { AuthTarget } from '../authenticate.js';
import {
  WELL_KNOWN_PRM,
  endpointForMetadataPath,
  endpointPathFor,
  metadataPath,
  protectedResourceMetadata,
  resourceUri,
  type ResourceLayout,
} from './protected-resource.js';

export interface ResourceRoutesOptions {
  layout: ResourceLayout;
  config: OAuthAuthConfig;
  publicUrl?: string;
}

export interface ResourceRoutes {
  /** Mount the metadata routes; call before the authentication middleware. */
  mount(app: Hono): void;
  /** The protected resource the request addresses. */
  targetOf(c: Context): AuthTarget;
}

/**
 * The origin a request addressed: `publicUrl`, else the Host's name (held to the Host allowlist)
 * with the port the connection actually arrived on — never a port the client wrote, which the
 * allowlist does not judge: a token minted for another server on another port of the same host
 * must not pass as one for this gateway (RFC 8707).
 */
function originOf(c: Context, publicUrl: string | undefined): string {
  if (publicUrl !== undefined) return new URL(publicUrl).origin;
  const url = new URL(c.req.url);
  const hostname = new URL(`http://${c.req.header('host') ?? url.host}`).hostname;
  // The port the connection arrived on (under @hono/node-server), else the URL's.
  const port = incomingMessageOf(c)?.socket.localPort ?? (url.port === '' ? undefined : Number(url.port));
  return `${url.protocol}//${hostname}${port === undefined || port === 80 ? '' : `:${port}`}`.toLowerCase();
}

export function compileResourceRoutes(options: ResourceRoutesOptions): ResourceRoutes {
  const { layout, config, publicUrl } = options;
  const metadataOptions = {
    authorizationServers: config.issuers.map((issuer) => issuer.issuer),
    scopes: config.scopes,
    ...(config.resourceName === undefined ? {} : { resourceName: config.resourceName }),
  };

  return {
    mount(app) {
      const answer = (c: Context) => {
        const endpoint = endpointForMetadataPath(layout, c.req.path);
        if (endpoint === undefined) return refusal('NOT_FOUND', 'no protected resource at this metadata URI');
        const document = protectedResourceMetadata(resourceUri(originOf(c, publicUrl), endpoint), metadataOptions);
        return c.json(document, 200, { 'cache-control': 'max-age=300' });
      };
      app.get(WELL_KNOWN_PRM, answer);
      app.get(`${WELL_KNOWN_PRM}/*`, answer);
    },
    targetOf(c) {
      const origin = originOf(c, publicUrl);
      const endpoint = endpointPathFor(layout, c.req.path);
      return { resource: resourceUri(origin, endpoint), metadataUrl: `${origin}${metadataPath(endpoint)}` };
    },
  };
}
