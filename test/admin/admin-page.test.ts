/**
 * The admin page in a real headless Chromium (Debian's `/usr/bin/chromium`, driven by
 * playwright-core; no browser download), in front of real upstreams: two stdio fixture servers
 * (`local`; `other`, shared, whose `serverInfo` is hostile markup) and the recorded `filesystem`
 * server over Streamable HTTP (`files`: 14 tools upstream, 3 filtered out).
 *
 * Without ever reloading, the page follows: a server stopped and started from outside (the
 * customisation watch stream), a tool list that grows (`list_changed` upstream), real calls
 * (requests, errors, p50/p95 and a chart drawn by the bundled uPlot under the page's CSP), new
 * audit lines, and its own reload and toggle buttons. It shows what a client sees (11 tools of
 * `files`, not the 14 it lists), the MCP URL, each side channel URL, the stdio child counts and a
 * link to /metrics; hostile upstream text stays text. A screenshot is saved to
 * `test-artifacts/admin-page.png`.
 *
 * Network safety: the browser resolves no name but 127.0.0.1 (`--host-resolver-rules`) and its
 * background services are off; the gateway and the upstreams bind 127.0.0.1.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import {
  assertBuilt,
  Cleanup,
  connectClient,
  killPids,
  newMarker,
  processesWithMarker,
  ROOT,
  sideChannelUrl,
  startCatalogueUpstream,
  stdioServer,
  textOf,
  waitUntil,
  within,
} from '../integration/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTEFACT = join(ROOT, 'test-artifacts', 'admin-page.png');
const cleanup = new Cleanup();
let gateway: RunningGateway;
let browser: BrowserContext;
let configPath: string;
let stateDir: string;
let auditFile: string;
let filesEntry: Record<string, unknown>;
const markers = { local: newMarker(), other: newMarker() };
const SECRET = 'argument-secret-4f1c9e';
const HOSTILE_TOOL = 'other__<img src=x id=injected>';
const HOSTILE_TITLE = '<img src=x id=injected-title onerror="document.title=1">';
const HOSTILE_DESCRIPTION = '"><script id=injected-description>document.title=2</script>';
const FILTERED = ['write_file', 'edit_file', 'move_file'];

const writeConfig = (otherEnv: Record<string, string>) =>
  writeFileSync(
    configPath,
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      stateDir,
      audit: { sink: auditFile },
      servers: {
        local: stdioServer(markers.local, { isolation: 'session' }),
        other: stdioServer(markers.other, { isolation: 'shared', env: { FIXTURE_SERVER_TITLE: HOSTILE_TITLE, FIXTURE_SERVER_DESCRIPTION: HOSTILE_DESCRIPTION, ...otherEnv } }),
        files: filesEntry,
      },
    }),
  );

beforeAll(async () => {
  assertBuilt();
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-admin-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.add(() => killPids([...processesWithMarker(markers.local), ...processesWithMarker(markers.other)]));
  const catalogue = await startCatalogueUpstream(cleanup, ['filesystem']);
  filesEntry = { ...(catalogue.servers({ filesystem: { disabledTools: FILTERED } }).filesystem as Record<string, unknown>) };
  configPath = join(dir, 'gateway.json');
  stateDir = join(dir, 'state');
  auditFile = join(dir, 'audit.jsonl');
  writeConfig({});
  gateway = await startGateway({ config: await loadConfigFile(configPath), logger: silentLogger(), env: process.env });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  browser = await chromium.launchPersistentContext(join(dir, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1500, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
    ],
  });
  cleanup.add(() => within(browser.close(), 10_000, 'browser close'));
}, 90_000);
afterAll(() => cleanup.run());

/** The text of each cell of a table's row for `server`. */
const cells = (page: Page, table: string, server: string) => page.locator(`#${table} tr[data-server="${server}"] td`).allTextContents();

/** Waits (a hang guard, never a speed claim) until a table row's cells satisfy `check`. */
async function rowBecomes(page: Page, table: string, server: string, check: (cells: string[]) => boolean, what: string): Promise<string[]> {
  let last: string[] = [];
  await waitUntil(async () => check((last = await cells(page, table, server))), what, 30_000).catch((error: Error) => {
    throw new Error(`${error.message}; the row read ${JSON.stringify(last)}`);
  });
  return last;
}

/** A global enablement decision made from outside the page (the route a host would use). */
async function toggleFromOutside(name: string, enabled: boolean): Promise<void> {
  const list = (await (await fetch(`${gateway.url}/customizations`)).json()) as { items: Array<{ id: string; name: string }> };
  const id = list.items.find((item) => item.name === name)?.id;
  const answer = await fetch(`${gateway.url}/customizations/toggle`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id, enabled, scope: 'global' }) });
  expect(answer.status).toBe(200);
}

describe('the admin page in Chromium', () => {
  it('shows what a client sees and follows stops, starts, tool list changes, calls and reloads without reloading itself', { timeout: 180_000 }, async () => {
    const page = await browser.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') scriptErrors.push(message.text());
    });
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations += 1;
    });
    const response = await page.goto(`${gateway.url}/admin`);
    expect(response?.status()).toBe(200);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    await expect(page.title()).resolves.toBe('portcullis — admin');
    await page.locator('#live[data-live="live"]').waitFor();

    // The gateway's URLs: the MCP URL clients are told, /metrics, each side channel.
    await expect(page.locator('#mcp-url').textContent()).resolves.toBe(gateway.publicUrl);
    await expect(page.locator('#metrics-link').getAttribute('href')).resolves.toBe('/metrics');
    const local = await cells(page, 'servers', 'local');
    expect(local.slice(0, 3)).toEqual(['local', 'ready', 'stdio']);
    expect(local[5]).toBe('portcullis-conformance-fixture 1.0.0');
    expect(Number(local[6])).toBeGreaterThanOrEqual(1); // its primary's child at least
    expect(local[7]).toBe('0');
    expect(local[9]).toBe(sideChannelUrl(gateway.publicUrl, 'local'));
    const files = await cells(page, 'servers', 'files');
    expect(files.slice(0, 3)).toEqual(['files', 'ready', 'streamableHttp']);
    expect(files[6]).toBe('—'); // no child process: an HTTP server

    // Hostile upstream text is text: no element of it exists, the title is shown as written.
    const other = await cells(page, 'servers', 'other');
    expect(other[5]).toBe(`${HOSTILE_TITLE} 1.0.0`);
    await expect(page.locator('#servers tr[data-server="other"] td').nth(5).getAttribute('title')).resolves.toBe(HOSTILE_DESCRIPTION);
    expect(await page.locator('#injected-title, #injected-description').count()).toBe(0);

    // What a client sees: files lists 14 tools upstream, a client is shown 11 (3 filtered out).
    expect(await cells(page, 'shown', 'files')).toEqual(['files', '11', '0', '3', '14', '0', '0', '0']);
    await expect(page.locator('#view-note').textContent()).resolves.toContain('any client of this gateway sees them');
    const otherTools = Number((await cells(page, 'shown', 'other'))[1]);
    expect(otherTools).toBeGreaterThan(5);

    // Nothing below reloads the page: this marker lives as long as the document does.
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));

    // Stopped and started from outside: the watch stream brings each state at once.
    await toggleFromOutside('local', false);
    await rowBecomes(page, 'servers', 'local', (row) => row[1] === 'closed', 'the page showing local stopped');
    await waitUntil(() => processesWithMarker(markers.local).length === 0, 'the disabled server stopping');
    await rowBecomes(page, 'servers', 'local', (row) => row[6] === '0', 'the page showing no child left'); // at its next refresh
    expect((await cells(page, 'shown', 'local'))[1]).toBe('not shown to this caller');
    await expect(page.locator('#customizations tr[data-customization="local"] td').nth(3).textContent()).resolves.toBe('disabled');
    await toggleFromOutside('local', true);
    await rowBecomes(page, 'servers', 'local', (row) => row[1] === 'ready', 'the page showing local started again');
    await rowBecomes(page, 'shown', 'local', (row) => row[1] === String(otherTools), 'local counted again');

    // A tool list that grows upstream (list_changed on other's shared connection): counted anew.
    const modern = await connectClient(cleanup, gateway.url, '2026');
    expect(textOf(await modern.client.callTool({ name: 'other__toggle_tool', arguments: { enabled: true } }))).toContain('enabled');
    await rowBecomes(page, 'shown', 'other', (row) => row[1] === String(otherTools + 1) && row[4] === String(otherTools + 1), 'the new tool counted');

    // Real calls: five echoes, and one refused on local's side channel (an unknown tool there is local's error).
    for (let i = 0; i < 5; i++) expect(textOf(await modern.client.callTool({ name: 'local__echo', arguments: { text: SECRET } }))).toContain(SECRET);
    const side = await connectClient(cleanup, sideChannelUrl(gateway.url, 'local'), '2025');
    await expect(side.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow();
    await expect(modern.client.callTool({ name: HOSTILE_TOOL, arguments: { text: SECRET } })).rejects.toThrow();
    const traffic = await rowBecomes(page, 'traffic', 'local', (row) => Number(row[1]) >= 6 && row[2] === '1', 'the calls counted');
    expect(traffic[3]).toMatch(/^[0-9.]+ (ms|s)$/);
    expect(traffic[4]).toMatch(/^[0-9.]+ (ms|s)$/);
    // 2026 calls of an `isolation: "session"` server lease pooled connections: children of local's own.
    expect(Number((await cells(page, 'servers', 'local'))[6])).toBeGreaterThanOrEqual(2);

    // The chart of local's minutes, drawn by the bundled uPlot.
    const chart = page.locator('#charts figure[data-server="local"] canvas').first();
    await chart.waitFor();
    const box = await chart.boundingBox();
    expect(box?.width).toBeGreaterThan(100);
    expect(box?.height).toBeGreaterThan(50);
    expect(await page.locator('#charts figure[data-server="files"]').count()).toBe(0); // files served nothing

    // The calls reached the audit rows live; the hostile tool name is text, the arguments nowhere.
    await waitUntil(async () => (await page.locator('#audit tbody tr.audit').count()) >= 7, 'the audit rows arriving');
    const newest = await page.locator('#audit tbody tr.audit').nth(0).locator('td').allTextContents();
    expect(newest.slice(1)).toEqual(['—', 'aggregate', 'tools/call', '—', HOSTILE_TOOL, 'allowed', 'error UNKNOWN_TOOL']);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.content()).not.toContain(SECRET);

    // The reload button: the edited server restarts, and the page shows it without a reload.
    const localRestarts = (await cells(page, 'servers', 'local'))[7];
    writeConfig({ EXTRA_SETTING: 'changed' });
    await page.click('#reload');
    await page.locator('#reload-outcome[data-outcome="applied"]').waitFor();
    expect(await page.locator('#reload-outcome').textContent()).toContain('restarted: other');
    await rowBecomes(page, 'servers', 'other', (row) => row[1] === 'ready' && row[7] === '1', 'other restarted');
    await expect(page.locator('#last-reload').textContent()).resolves.toContain('applied — restarted: other');
    expect((await cells(page, 'servers', 'local'))[7]).toBe(localRestarts); // only the edited server restarted

    // A toggle button on the page stops a server for everyone, and starts it again.
    const toggle = page.locator('#customizations tr[data-customization="local"] button.toggle');
    await expect(toggle.textContent()).resolves.toBe('Disable');
    await toggle.click();
    await page.locator('#toggle-outcome[data-outcome="applied"]').waitFor();
    await rowBecomes(page, 'servers', 'local', (row) => row[1] === 'closed', 'local stopped by the page');
    await page.locator('#customizations tr[data-customization="local"] button.toggle', { hasText: 'Enable' }).click();
    await rowBecomes(page, 'servers', 'local', (row) => row[1] === 'ready', 'local started by the page');

    expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
    expect(navigations).toBe(1);
    expect(scriptErrors).toEqual([]); // the CSP let the page's script, style and chart library through, and nothing failed

    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: ARTEFACT, fullPage: true });
    expect(existsSync(ARTEFACT)).toBe(true);
  });

  it('serves the chart library itself, behind the admin rule, with its version in the path', async () => {
    const page = await (await fetch(`${gateway.url}/admin`)).text();
    const script = /<script src="([^"]+)" nonce=/.exec(page)?.[1];
    expect(script).toMatch(/\/admin\/assets\/uplot-1\.6\.32\.min\.js$/);
    const answer = await fetch(new URL(script!, gateway.url));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/javascript');
    expect(answer.headers.get('cache-control')).toContain('immutable');
    expect(await answer.text()).toContain('uPlot');
    expect((await fetch(`${gateway.url}/admin/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/admin/assets/uplot-1.6.32.min.js`, { method: 'POST' })).status).toBe(405);
  });
});
