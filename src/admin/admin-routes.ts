/**
 * The admin routes under each MCP path, behind the same Host/Origin guards and authentication as
 * the MCP endpoint (app.ts mounts them after those), and then the admin check (admin-access.ts):
 *
 * - `GET <path>/admin` → the page (admin-page.ts), with a Content-Security-Policy that allows its
 *   own inline script and style and the chart library's script and stylesheet by nonce, requests
 *   to its own origin only (its refreshes), and nothing else; never cached, never framed;
 * - `GET <path>/admin/status` → the same data as JSON, as the asking admin sees it (what the page
 *   refreshes from); `?auditAfter=<n>` leaves out the audit lines the page already has;
 * - `GET <path>/admin/assets/uplot-<version>.min.js|css` → the chart library (chart-assets.ts);
 * - `POST <path>/admin/reload` with a JSON body → a hot reload, answered with its outcome. A JSON
 *   body is required (415 otherwise): an HTML form cannot send one, so another site cannot press
 *   the button for an operator's browser (and the Origin guard refuses a foreign Origin anyway).
 *
 * Refusals are `ADMIN_REFUSED` (403) through the error taxonomy.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import { accessOf, principalOf } from '../inbound/auth/auth-middleware.js';
import type { ReloadOutcome } from '../lifecycle/reload.js';
import { adminGuard } from './admin-access.js';
import { renderAdminPage } from './admin-page.js';
import type { AdminSources } from './admin-status.js';
import { chartAssets } from './chart-assets.js';
import type { AdminCaller } from './shown-counts.js';

export interface AdminRoutesOptions {
  /** The MCP endpoint's path ('' for `/`). */
  readonly base: string;
  readonly sources: AdminSources;
  /** Runs a hot reload (the gateway notes its outcome for the page). */
  readonly reload: () => Promise<ReloadOutcome>;
  readonly authOn: boolean;
  /** The policy's `admins`. */
  readonly admins: readonly string[];
  /** Tool integrity is on: the page shows held tool changes from `<path>/integrity`. */
  readonly integrity?: boolean;
}

const NO_STORE = { 'cache-control': 'no-store' };

const callerOf = (c: Context): AdminCaller => ({ principal: principalOf(c), access: accessOf(c) });

/** `?auditAfter=<n>`: a whole number, the latest audit line the page has (absent: 0, every line). */
function auditAfterOf(c: Context): number | GatewayError {
  const raw = c.req.query('auditAfter');
  if (raw === undefined) return 0;
  return /^(0|[1-9][0-9]{0,15})$/.test(raw) ? Number(raw) : new GatewayError('INVALID_PARAMS', '"auditAfter" must be a whole number (the auditLatest of an earlier status)');
}

export function mountAdmin(app: Hono, options: AdminRoutesOptions): void {
  const path = `${options.base}/admin`;
  const refused = adminGuard(options);

  const assets = chartAssets();
  app.get(path, async (c) => {
    const refusal = refused(c);
    if (refusal !== undefined) return refusal;
    const nonce = randomBytes(16).toString('base64');
    const html = renderAdminPage(await options.sources.status(callerOf(c)), {
      nonce,
      urls: {
        status: `${path}/status`,
        reload: `${path}/reload`,
        toggle: `${options.base}/customizations/toggle`,
        watch: `${options.base}/customizations?watch=1`,
        chartScript: `${path}/${assets.script}`,
        chartStylesheet: `${path}/${assets.stylesheet}`,
        ...(options.integrity === true ? { integrity: `${options.base}/integrity` } : {}),
      },
    });
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
  app.get(`${path}/status`, async (c) => {
    const refusal = refused(c);
    if (refusal !== undefined) return refusal;
    const after = auditAfterOf(c);
    if (after instanceof GatewayError) return errorResponse(after);
    return Response.json(await options.sources.status(callerOf(c), after), { headers: NO_STORE });
  });
  app.get(`${path}/assets/:file`, async (c) => {
    const refusal = refused(c);
    if (refusal !== undefined) return refusal;
    const asset = await assets.read(`assets/${c.req.param('file')}`);
    if (asset === undefined) return errorResponse(new GatewayError('NOT_FOUND', 'Not found'));
    return new Response(new Uint8Array(asset.body), {
      status: 200,
      // The version is in the path: this body never changes under it.
      headers: { 'content-type': asset.contentType, 'cache-control': 'private, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
    });
  });
  app.post(`${path}/reload`, async (c) => {
    const refusal = refused(c);
    if (refusal !== undefined) return refusal;
    if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json')) {
      return errorResponse(new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'a reload is requested with a JSON body (content-type: application/json)'));
    }
    return Response.json(await options.reload(), { headers: NO_STORE });
  });
  for (const route of [path, `${path}/status`, `${path}/assets/:file`, `${path}/reload`]) {
    app.all(route, () => errorResponse(new GatewayError('METHOD_NOT_ALLOWED', 'the admin page and its data are read with GET; a reload is a POST to admin/reload')));
  }
}
