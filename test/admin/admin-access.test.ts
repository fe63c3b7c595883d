/**
 * The admin page's access rule (pure) and its routes' refusals over real HTTP: an authenticated
 * principal outside the policy's `admins` is refused 403 `ADMIN_REFUSED` (the page, its status and
 * its chart library alike), a listed one gets the page with its CSP; a reload needs a JSON body;
 * an escaped value never becomes markup, embedded JSON never closes its script block.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { checkAdminAccess } from '../../src/admin/admin-access.js';
import { escapeHtml, scriptJson } from '../../src/admin/admin-page.js';
import { assertBuilt, bearerPrincipals, Cleanup, rawRequest, startGatewayFor, stdioServer, newMarker, killPids, processesWithMarker, policyFile, gatewayConfig } from '../integration/harness.js';

const perTest = new Cleanup();
const perFile = new Cleanup();
afterEach(() => perTest.run());
afterAll(() => perFile.run());

describe('checkAdminAccess', () => {
  const admins = new Set(['ops']);
  it.each([
    [{ authOn: true, principal: 'ops', remoteAddress: '203.0.113.9' }, true],
    [{ authOn: true, principal: 'dev', remoteAddress: '127.0.0.1' }, false],
    [{ authOn: true, principal: undefined, remoteAddress: '127.0.0.1' }, false],
    [{ authOn: false, principal: undefined, remoteAddress: '127.0.0.1' }, true],
    [{ authOn: false, principal: undefined, remoteAddress: '::1' }, true],
    [{ authOn: false, principal: undefined, remoteAddress: '::ffff:127.0.0.1' }, true],
    [{ authOn: false, principal: undefined, remoteAddress: '192.168.1.20' }, false],
    [{ authOn: false, principal: undefined, remoteAddress: '0.0.0.0' }, false],
    [{ authOn: false, principal: undefined, remoteAddress: undefined }, false],
  ])('%j → %s', (input, ok) => {
    expect(checkAdminAccess({ ...input, admins }).ok).toBe(ok);
  });
  it('admits nobody with auth on and no admin principals listed', () => {
    expect(checkAdminAccess({ authOn: true, principal: 'ops', remoteAddress: '127.0.0.1', admins: new Set() }).ok).toBe(false);
  });
});

describe('escapeHtml and scriptJson', () => {
  it('leaves no markup in a hostile value', () => {
    expect(escapeHtml(`<script>alert("x")</script>&'`)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
  });

  it('embeds JSON that cannot close its script block or open a comment, and reads back unchanged', () => {
    const hostile = { name: '</script><script>alert(1)</script><!--', also: 'a & b > c\u2028d' };
    const embedded = scriptJson(hostile);
    expect(embedded).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(embedded)).toEqual(hostile);
  });
});

describe('one list of admins', () => {
  it("refuses a config that still lists admin.principals, saying the list is the policy's admins", () => {
    expect(() => gatewayConfig({}, { admin: { principals: ['ops'] } })).toThrow(
      /admin\.principals: the list of admins is the policy's "admins" \(one list for the admin page, \/metrics, \/readyz and workspace and global toggles\)/,
    );
    expect(() => gatewayConfig({}, { admin: { enabled: true, colour: 'red' } })).toThrow(/admin: Unrecognized key/i);
  });
});

describe('the admin routes with auth on', () => {
  it('refuse a principal not listed as admin (403 ADMIN_REFUSED) and serve a listed one', async () => {
    assertBuilt();
    const marker = newMarker();
    perTest.add(() => killPids(processesWithMarker(marker)));
    const principals = bearerPrincipals('ops', 'dev');
    const gateway = await startGatewayFor(perTest, principals, { local: stdioServer(marker) }, { policy: policyFile({ admins: ['ops'] }) });
    const admin = `${gateway.url}/admin`;

    const dev = await rawRequest(admin, { method: 'GET', headers: principals.headers('dev') });
    expect(dev.status).toBe(403);
    expect(dev.json().error).toMatchObject({ code: -32600, data: { code: 'ADMIN_REFUSED' } });
    const anonymous = await rawRequest(admin, { method: 'GET' });
    expect(anonymous.status).toBe(401);
    const devReload = await rawRequest(`${admin}/reload`, { headers: { ...principals.headers('dev'), 'content-type': 'application/json' }, body: '{}' });
    expect(devReload.status).toBe(403);

    const ops = await rawRequest(admin, { method: 'GET', headers: principals.headers('ops') });
    expect(ops.status).toBe(200);
    expect(ops.headers['content-type']).toContain('text/html');
    expect(ops.headers['content-security-policy']).toContain("default-src 'none'");
    // The page carries the status it was served with (drawn by its script), as ops sees it.
    const embedded = JSON.parse(/<script type="application\/json" id="admin-data">(.*?)<\/script>/s.exec(ops.body)![1]!) as { status: { servers: Array<{ name: string }>; view: { principal?: string } } };
    expect(embedded.status.servers.map((s) => s.name)).toEqual(['local']);
    expect(embedded.status.view.principal).toBe('ops');
    // No audit block: the status has no audit lines (the page then says the audit log is off).
    const status = await rawRequest(`${admin}/status`, { method: 'GET', headers: principals.headers('ops') });
    expect(status.json()).not.toHaveProperty('audit');
    expect((await rawRequest(`${admin}/status`, { method: 'GET', headers: principals.headers('dev') })).status).toBe(403);
    const asset = /<script src="([^"]+)" nonce=/.exec(ops.body)![1]!;
    expect((await rawRequest(new URL(asset, gateway.url).href, { method: 'GET', headers: principals.headers('dev') })).status).toBe(403);
    expect((await rawRequest(new URL(asset, gateway.url).href, { method: 'GET', headers: principals.headers('ops') })).status).toBe(200);
    // A reload must come as JSON: a cross-site HTML form cannot send it.
    const form = await rawRequest(`${admin}/reload`, { headers: { ...principals.headers('ops'), 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' });
    expect(form.status).toBe(415);
    // Built in memory, this gateway has no file to re-read: the reload says so, nothing changes.
    const reload = await rawRequest(`${admin}/reload`, { headers: { ...principals.headers('ops'), 'content-type': 'application/json' }, body: '{}' });
    expect(reload.status).toBe(200);
    expect(JSON.parse(reload.body)).toMatchObject({ applied: false, problems: ['this gateway was not started from a config file'] });
  });
});
