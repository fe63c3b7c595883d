/**
 * The admin page's "Held tool changes" section (admin/integrity-script.ts) in a real headless
 * Chromium (Debian's `/usr/bin/chromium`, driven by playwright-core), in front of the rug-pull
 * fixture rewriting its tools while a 2025 session is open: the section lists each pending
 * definition with its flags and a line diff of the pinned definition against the new one (the
 * upstream's `<IMPORTANT>` markup shown as text, never made an element), and its Reject and
 * Approve buttons decide through the approvals API — the rejected tool stays hidden, the approved
 * one is served to the open session, which hears `list_changed`.
 *
 * Artefacts in `test-artifacts/` (ignored by git): `admin-integrity-diff.png`, the section with
 * both changes pending, and `integrity-pending.json`, the body of `GET <path>/integrity` exactly
 * as served while one change was pending.
 *
 * Network safety: the browser resolves no name but 127.0.0.1 and its background services are off;
 * the gateway and the upstream bind 127.0.0.1 or speak stdio.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  integrityListing,
  REVIEWED,
  ROOT,
  RUG_PULLED,
  scratchDir,
  startTestGateway,
  stdioRug,
  textOf,
  toolsFile,
  waitUntil,
  within,
} from '../integration/harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTEFACTS = join(ROOT, 'test-artifacts');
const cleanup = new Cleanup();
let browser: BrowserContext;
let profile: string;

beforeAll(async () => {
  assertBuilt();
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (.ci/run does)`);
  profile = scratchDir(cleanup, 'portcullis-admin-integrity-');
  browser = await chromium.launchPersistentContext(join(profile, 'chromium-profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1200, height: 900 },
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

describe('the held tool changes on the admin page', () => {
  it('shows each pending definition with its flags and a diff, and its buttons reject and approve', { timeout: 120_000 }, async () => {
    const dir = scratchDir(cleanup);
    const gateway = await startTestGateway(cleanup, { notes: stdioRug(toolsFile(dir, 'notes', REVIEWED)) }, { stateDir: join(dir, 'state'), toolIntegrity: { mode: 'hold' } });
    const { client } = await connectClient(cleanup, gateway.url, '2025');
    const changes = collectNotifications(client, 'notifications/tools/list_changed');
    expect(textOf(await client.callTool({ name: 'notes__publish', arguments: { tools: RUG_PULLED } }))).toBe('published 3');
    await changes.waitFor(1);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['notes__publish', 'notes__read_note']);

    const page = await browser.newPage();
    const scriptErrors: string[] = [];
    page.on('pageerror', (error) => scriptErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') scriptErrors.push(message.text());
    });
    await page.goto(`${gateway.url}/admin`);
    const section = page.locator('#integrity');
    const held = section.locator('.held');
    await held.nth(1).waitFor();
    expect(await section.locator('p.note').first().textContent()).toBe('Mode: hold · 2 pending');
    expect((await held.locator('h3').allTextContents()).sort()).toEqual(['notes · add_note · changed', 'notes · sync_notes · new']);

    // The changed definition: its flags, and a diff whose one changed line is the description.
    const changed = held.filter({ hasText: 'add_note · changed' });
    const flags = await changed.locator('ul.flags li').allTextContents();
    expect(flags.map((f) => f.split(' ')[0])).toEqual(['model-directive', 'secret-read']);
    const removed = await changed.locator('table.diff tr.del td:nth-child(2)').allTextContents();
    const added = await changed.locator('table.diff tr.add td:nth-child(2)').allTextContents();
    expect(removed).toEqual(['  "description": "Adds a note.",']);
    expect(added).toEqual([`  "description": ${JSON.stringify(RUG_PULLED[0]!.description)},`]);
    expect(await changed.locator('table.diff tr:not(.add):not(.del)').count()).toBeGreaterThan(3); // the unchanged lines around it
    // The upstream's markup is text: no element was made of it.
    expect(await page.locator('important').count()).toBe(0);
    // The new tool: nothing before it, every line added.
    const fresh = held.filter({ hasText: 'sync_notes · new' });
    expect(await fresh.locator('table.diff tr.del').count()).toBe(0);
    expect(await fresh.locator('table.diff tr.add').count()).toBe(await fresh.locator('table.diff tr').count());

    mkdirSync(ARTEFACTS, { recursive: true });
    await section.screenshot({ path: join(ARTEFACTS, 'admin-integrity-diff.png') });

    // Reject the new tool from the page: off the list, still refused to the session.
    await fresh.getByRole('button', { name: 'Reject' }).click();
    await waitUntil(async () => (await held.count()) === 1, 'the page redrawn without the rejected tool', 15_000);
    expect((await errorOf(client.callTool({ name: 'notes__sync_notes', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });
    const body = await (await fetch(`${gateway.url}/integrity`)).text();
    writeFileSync(join(ARTEFACTS, 'integrity-pending.json'), body);
    expect((JSON.parse(body) as { pending: Array<{ tool: string }> }).pending.map((p) => p.tool)).toEqual(['add_note']);

    // Approve the changed one: the session hears of it and is served the definition shown.
    await held.filter({ hasText: 'add_note · changed' }).getByRole('button', { name: 'Approve' }).click();
    await section.locator('p.note', { hasText: 'Mode: hold · 0 pending' }).waitFor();
    await changes.waitFor(2);
    const served = (await client.listTools()).tools.find((t) => t.name === 'notes__add_note');
    expect(served?.description).toBe(RUG_PULLED[0]!.description);
    expect(textOf(await client.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');
    expect((await integrityListing(gateway.url)).body.pending).toEqual([]);
    expect(scriptErrors).toEqual([]);
  });
});
