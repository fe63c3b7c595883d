/**
 * The Hono routes of the HTTP+SSE transport (MCP 2024-11-05) on every MCP endpoint: for the
 * aggregate `<path>/sse` and `<path>/messages`, for each side channel
 * `<path>/servers/<name>/sse` and `…/messages`. They sit behind the same Host, Origin and
 * authentication middleware as the Streamable HTTP routes (app.ts mounts them there). When the
 * policy turns the transport off (`legacySse.inbound: false`), they answer 404 naming the field.
 */
import type { Context, Hono } from 'hono';
import { refusal } from '../../errors.js';
import { callerOf, stripAuthorization } from '../auth/auth-middleware.js';
import type { McpEndpoint } from '../endpoint.js';
import { incomingBodyOf } from '../incoming-body.js';

export interface LegacySseRoutesOptions {
  /** The MCP path without a trailing slash (`''` when it is `/`). */
  base: string;
  aggregate: McpEndpoint;
  sideChannels: ReadonlyMap<string, McpEndpoint>;
  /** The policy's `legacySse.inbound`. */
  enabled: boolean;
}

const notFound = () => refusal('NOT_FOUND', 'Not found');

const disabled = () =>
  refusal(
    'NOT_FOUND',
    'Not found: the HTTP+SSE transport (2024-11-05) is off under this gateway\'s policy (legacySse.inbound); use Streamable HTTP at the MCP endpoint',
  );

function methodNotAllowed(allow: string): Response {
  return refusal('METHOD_NOT_ALLOWED', 'Method not allowed.', { headers: { allow } });
}

export function mountLegacySse(app: Hono, options: LegacySseRoutesOptions): void {
  const { base, aggregate, sideChannels, enabled } = options;

  const stream = (c: Context, endpoint: McpEndpoint | undefined, messagePath: string): Response | Promise<Response> => {
    const caller = callerOf(c);
    if (endpoint === undefined || !endpoint.shownTo(caller.access)) return notFound();
    if (!enabled) return disabled();
    if (c.req.method !== 'GET') return methodNotAllowed('GET');
    return endpoint.legacySse.open(caller, messagePath);
  };
  const message = (c: Context, endpoint: McpEndpoint | undefined): Response | Promise<Response> => {
    const caller = callerOf(c);
    if (endpoint === undefined || !endpoint.shownTo(caller.access)) return notFound();
    if (!enabled) return disabled();
    if (c.req.method !== 'POST') return methodNotAllowed('POST');
    // As for Streamable HTTP: the client's Authorization stops here; the body is read from the
    // Node request when there is one.
    const incoming = incomingBodyOf(c);
    return endpoint.legacySse.post(stripAuthorization(c.req.raw, incoming !== undefined), caller, incoming);
  };

  // The announced message path is built from configuration (the path, a configured server's
  // name), never from the request.
  app.all(`${base}/sse`, (c) => stream(c, aggregate, `${base}/messages`));
  app.all(`${base}/messages`, (c) => message(c, aggregate));
  app.all(`${base}/servers/:name/sse`, (c) => {
    const name = c.req.param('name');
    return stream(c, sideChannels.get(name), `${base}/servers/${name}/messages`);
  });
  app.all(`${base}/servers/:name/messages`, (c) => message(c, sideChannels.get(c.req.param('name'))));
}
