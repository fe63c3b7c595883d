/**
 * The admin routes under each MCP path, behind the same Host/Origin guards and authentication as
 * the MCP endpoint (app.ts mounts them after those), and then the admin check (admin-access.ts):
 *
 * - `GET <path>/admin` → the page (admin-page.ts), with a Content-Security-Policy that allows its
 *   one inline script and style by nonce and nothing else, never cached, never framed;
 * - `GET <path>/admin/status` → the same data as JSON;
 * - `POST <path>/admin/reload` with a JSON body → a hot reload, answered with its outcome. A JSON
 *   body is required (415 otherwise): an HTML form cannot send one, so another site cannot press
 *   the button for an operator's browser (and the Origin guard refuses a foreign Origin anyway).
 *
 * Refusals are `ADMIN_REFUSED` (403) through the error taxonomy.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import { principalOf } from '../inbound/auth/auth-middleware.js';
import type { ReloadOutcome } from '../lifecycle/reload.js';
import { checkAdminAccess } from './admin-access.js';
import { renderAdminPage } from './admin-page.js';
import type { AdminSources } from './admin-status.js';

export interface AdminRoutesOptions {
  /** The MCP endpoint's path ('' for `/`). */
  readonly base: string;
  readonly sources: AdminSources;
  /** Runs a hot reload (the gateway notes its outcome for the page). */
  readonly reload: () => Promise<ReloadOutcome>;
  readonly authOn: boolean;
  readonly admins: readonly string[];
}

function remoteAddressOf(c: Context): string | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  return (env as { incoming: { socket?: { remoteAddress?: string } } }).incoming.socket?.remoteAddress;
}

const NO_STORE = { 'cache-control': 'no-store' };

export function mountAdmin(app: Hono, options: AdminRoutesOptions): void {
  const path = `${options.base}/admin`;
  const admins = new Set(options.admins);
  const refused = (c: Context): Response | undefined => {
    const access = checkAdminAccess({ authOn: options.authOn, principal: principalOf(c), remoteAddress: remoteAddressOf(c), admins });
    return access.ok ? undefined : errorResponse(new GatewayError('ADMIN_REFUSED', access.message));
  };

  app.get(path, async (c) => {
    const refusal = refused(c);
    if (refusal !== undefined) return refusal;
    const nonce = randomBytes(16).toString('base64');
    const html = renderAdminPage(await options.sources.status(), { reloadUrl: `${path}/reload`, toggleUrl: `${options.base}/customizations/toggle`, nonce });
    return new Response(html, {
      status: 200,
      headers: {
        ...NO_STORE,
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      },
    });
  });
  app.get(`${path}/status`, async (c) => refused(c) ?? Response.json(await options.sources.status(), { headers: NO_STORE }));
  app.post(`${path}/reload`, async (c) => {
    const refusal = refused(c);
    if (refusal !== undefined) return refusal;
    if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json')) {
      return errorResponse(new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'a reload is requested with a JSON body (content-type: application/json)'));
    }
    return Response.json(await options.reload(), { headers: NO_STORE });
  });
  for (const route of [path, `${path}/status`, `${path}/reload`]) {
    app.all(route, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'the admin page is read with GET; a reload is a POST to admin/reload')));
  }
}
