/**
 * The admin page in a real headless Chromium (Debian's `/usr/bin/chromium`, driven by
 * playwright-core; no browser download): it loads under its strict CSP, lists the configured
 * servers with state, transport and tool count, and its reload button applies an edited config
 * file (a changed server is restarted, which the page then shows), and a customisation's global
 * toggle (`POST <path>/customizations/toggle`) stops and starts its server, and a tools/call through
 * the gateway appears in its recent audit lines (a hostile tool name shown as text, never markup;
 * the call's arguments nowhere on the page). A screenshot is saved to `test-artifacts/admin-page.png`.
 *
 * Network safety: the browser resolves no name but 127.0.0.1 (`--host-resolver-rules`) and its
 * background services are off; the gateway binds 127.0.0.1.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { assertBuilt, Cleanup, connectClient, killPids, newMarker, processesWithMarker, ROOT, stdioServer, textOf, waitUntil, within } from '../integration/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTEFACT = join(ROOT, 'test-artifacts', 'admin-page.png');
const cleanup = new Cleanup();
let gateway: RunningGateway;
let browser: BrowserContext;
let configPath: string;
let stateDir: string;
const markers = { local: newMarker(), other: newMarker() };
let auditFile: string;
const SECRET = 'argument-secret-4f1c9e';
const HOSTILE_TOOL = 'other__<img src=x id=injected>';

const writeConfig = (other: Record<string, unknown>) =>
  writeFileSync(configPath, JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, stateDir, audit: { sink: auditFile }, servers: { local: stdioServer(markers.local), other: stdioServer(markers.other, other) } }));

beforeAll(async () => {
  assertBuilt();
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-admin-'));
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.add(() => killPids([...processesWithMarker(markers.local), ...processesWithMarker(markers.other)]));
  configPath = join(dir, 'gateway.json');
  stateDir = join(dir, 'state');
  auditFile = join(dir, 'audit.jsonl');
  writeConfig({});
  gateway = await startGateway({ config: await loadConfigFile(configPath), logger: silentLogger(), env: process.env });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  const profile = join(dir, 'chromium-profile');
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
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
}, 60_000);
afterAll(() => cleanup.run());


describe('the admin page in Chromium', () => {
  it('shows the servers, its reload button applies the edited config (the changed server restarts), a global toggle stops and starts a server, a tools/call shows as an audit row', async () => {
    const page = await browser.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') scriptErrors.push(message.text());
    });
    const response = await page.goto(`${gateway.url}/admin`);
    expect(response?.status()).toBe(200);
    await expect(page.title()).resolves.toBe('portcullis — admin');

    const row = (server: string) => page.locator(`#servers tr[data-server="${server}"] td`);
    for (const server of ['local', 'other']) {
      const cells = await row(server).allTextContents();
      expect(cells.slice(0, 5)).toEqual([server, 'ready', 'stdio', 'required', 'session']);
      expect(Number(cells[5])).toBeGreaterThan(5); // the fixture's tools
      expect(cells[6]).toBe('0');
    }
    expect(await page.locator('#sessions tr[data-endpoint="aggregate"] td').allTextContents()).toEqual(['aggregate', '0']);
    await expect(page.locator('#last-reload').textContent()).resolves.toContain('no reload since the gateway started');

    writeConfig({ env: { EXTRA_SETTING: 'changed' } });
    await page.click('#reload');
    await page.locator('#reload-outcome[data-outcome="applied"]').waitFor();
    expect(await page.locator('#reload-outcome').textContent()).toContain('restarted: other');
    await page.reload();
    expect(await page.locator('#last-reload').textContent()).toContain('applied — restarted: other');
    expect((await row('other').allTextContents())[6]).toBe('1');
    expect((await row('local').allTextContents())[6]).toBe('0');
    expect((await row('other').allTextContents())[1]).toBe('ready');

    // A global toggle: disabling `local` stops its server (its child exits) for everyone, enabling starts it again.
    const toggle = page.locator('#customizations tr[data-customization="local"] button.toggle');
    const globalCell = () => page.locator('#customizations tr[data-customization="local"] td').nth(3).textContent();
    await expect(globalCell()).resolves.toBe('enabled');
    await expect(toggle.textContent()).resolves.toBe('Disable');
    await toggle.click();
    await page.locator('#toggle-outcome[data-outcome="applied"]').waitFor();
    await expect(globalCell()).resolves.toBe('disabled');
    await waitUntil(() => processesWithMarker(markers.local).length === 0, 'the disabled server stopping');
    await page.reload();
    expect((await row('local').allTextContents())[1]).toBe('closed');
    await expect(globalCell()).resolves.toBe('disabled');
    expect((await row('other').allTextContents())[1]).toBe('ready'); // the other server runs on
    await expect(toggle.textContent()).resolves.toBe('Enable');
    await toggle.click();
    await page.locator('#toggle-outcome[data-outcome="applied"]').waitFor();
    await waitUntil(() => processesWithMarker(markers.local).length > 0, 'the enabled server starting');
    await page.reload();
    await expect(globalCell()).resolves.toBe('enabled');

    // A tools/call through the gateway shows as the newest audit row; a hostile tool name is text, never markup.
    const { client } = await connectClient(cleanup, gateway.url, '2026');
    expect(textOf(await client.callTool({ name: 'other__echo', arguments: { text: SECRET } }))).toContain(SECRET);
    await expect(client.callTool({ name: HOSTILE_TOOL, arguments: { text: SECRET } })).rejects.toThrow();
    await page.reload();
    const auditRows = page.locator('#audit tbody tr.audit');
    const newest = await auditRows.nth(0).locator('td').allTextContents();
    expect(newest.slice(1)).toEqual(['—', 'aggregate', 'tools/call', '—', HOSTILE_TOOL, 'allowed', 'error UNKNOWN_TOOL']);
    const echoed = await auditRows.nth(1).locator('td').allTextContents();
    expect(echoed.slice(1)).toEqual(['—', 'aggregate', 'tools/call', 'other', 'other__echo', 'allowed', 'ok']);
    expect(Number.isNaN(Date.parse(echoed[0]!))).toBe(false);
    expect(await page.locator('#injected').count()).toBe(0);
    expect(await page.content()).not.toContain(SECRET);

    expect(scriptErrors).toEqual([]); // the CSP let the page's own script and style through, and nothing failed

    mkdirSync(join(ROOT, 'test-artifacts'), { recursive: true });
    await page.screenshot({ path: ARTEFACT, fullPage: true });
    expect(existsSync(ARTEFACT)).toBe(true);
  });
});
