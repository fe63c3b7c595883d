/**
 * Who may review and decide held tool definitions (admin/integrity-routes.ts, `mayDecide`): each
 * branch of the pure rule, then over real HTTP with real authentication (bearer principals) in
 * front of the rug-pull fixture rewriting its tools while sessions are open — two principals, one
 * of them in the policy's `admins`: only the admin sees the pending change and decides it; the
 * other gets 403 `ADMIN_REFUSED` saying why, and what it tried to approve stays pending (listed,
 * refused to its own session); an anonymous caller gets 401. Under the shipped `strict` policy a
 * gateway without authentication refuses every decision (even from loopback, where the default
 * policy lets the local operator decide), and with authentication its admin decides — and an
 * authenticated 2026 client's listen stream hears the approval (the gateway announces it).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mayDecide, type DecisionPermissions } from '../../src/admin/integrity-routes.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  collectNotifications,
  connectClient,
  errorOf,
  integrityDecision,
  integrityListing,
  policyFile,
  REVIEWED,
  ROOT,
  RUG_PULLED,
  scratchDir,
  startGatewayFor,
  startTestGateway,
  stdioRug,
  textOf,
  toolsFile,
  within,
  type Era,
} from '../integration/harness.js';
import type { Client } from '@modelcontextprotocol/client';

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

describe('mayDecide', () => {
  const admins = new Set(['ops']);
  const rule = (overrides: Partial<DecisionPermissions>): DecisionPermissions => ({ authOn: false, admins, openToLocal: false, requireAuth: false, ...overrides });
  it.each([
    ['auth on, an admin', 'ops', rule({ authOn: true }), true],
    ['auth on, an admin, the policy requiring auth', 'ops', rule({ authOn: true, requireAuth: true }), true],
    ['auth on, a principal not listed', 'dev', rule({ authOn: true }), false],
    ['auth on, no principal', undefined, rule({ authOn: true }), false],
    ['auth on, no admins listed', 'ops', rule({ authOn: true, admins: new Set() }), false],
    ['auth off, a loopback listener', undefined, rule({ openToLocal: true }), true],
    ['auth off, a loopback listener, the policy requiring auth', undefined, rule({ openToLocal: true, requireAuth: true }), false],
    ['auth off, not loopback', undefined, rule({}), false],
  ] as const)('%s → %s', (_, principal, permissions, ok) => {
    expect(mayDecide(principal, permissions).ok).toBe(ok);
  });

  it('says why in each refusal, naming what would allow it', () => {
    expect(mayDecide('dev', rule({ authOn: true }))).toEqual({ ok: false, message: "only the policy's admins may review and decide held tool definitions" });
    expect(mayDecide(undefined, rule({ openToLocal: true, requireAuth: true }))).toEqual({
      ok: false,
      message: 'the policy requires authentication for tool-integrity decisions (toolIntegrity.decisionsRequireAuth); turn auth on',
    });
    expect(mayDecide(undefined, rule({}))).toEqual({ ok: false, message: 'without auth, tool-integrity decisions are taken on a loopback listener only' });
  });
});

/**
 * Publishes the rewritten tools through `client` (of `era`) and re-lists, as a client does: a 2025
 * session once it hears `list_changed`; a 2026 client at once (with auth on, a principal's own
 * connection's changes are not published to listeners — routing/listens/listen-feed.ts — and its lists say
 * `ttlMs: 0`; the fixture announces the change before it answers, so the cache is already stale).
 */
async function rugPull(client: Client, era: Era): Promise<void> {
  const changes = collectNotifications(client, 'notifications/tools/list_changed');
  expect(textOf(await client.callTool({ name: 'notes__publish', arguments: { tools: RUG_PULLED } }))).toBe('published 3');
  if (era === '2025') await changes.waitFor(1);
  expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['notes__publish', 'notes__read_note']);
}

/** The pending entries of server `notes` as the pin file holds them. */
const pinFileEntries = (stateDir: string) =>
  Object.values((JSON.parse(readFileSync(join(stateDir, 'tool-pins.json'), 'utf8')) as { servers: Record<string, { pending: Record<string, { id: string; tool: string }> }> }).servers.notes?.pending ?? {});
const pinFilePending = (stateDir: string) => pinFileEntries(stateDir).map((p) => p.tool).sort();

describe('two principals, one an admin, with authentication on', () => {
  it('lets only the admin see and decide; the other is refused 403 and the change stays pending', async () => {
    const dir = scratchDir(cleanup);
    const principals = bearerPrincipals('ops', 'dev');
    const gateway = await startGatewayFor(cleanup, principals, { notes: stdioRug(toolsFile(dir, 'notes', REVIEWED)) }, {
      policy: policyFile({ admins: ['ops'] }),
      stateDir: join(dir, 'state'),
      toolIntegrity: { mode: 'hold' },
    });
    const { client: dev } = await connectClient(cleanup, gateway.url, '2025', { headers: principals.headers('dev') });
    const { client: ops } = await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('ops') });
    expect((await dev.listTools()).tools.map((t) => t.name).sort()).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);
    await rugPull(dev, '2025');

    // The admin sees both changes.
    const listed = await integrityListing(gateway.url, principals.headers('ops'));
    expect(listed.status).toBe(200);
    const changed = listed.body.pending!.find((p) => p.tool === 'add_note')!;
    const added = listed.body.pending!.find((p) => p.tool === 'sync_notes')!;
    expect([changed.change, added.change]).toEqual(['changed', 'new']);

    // The other principal may neither see nor decide them.
    const refusal = { code: -32600, message: "only the policy's admins may review and decide held tool definitions", data: { code: 'ADMIN_REFUSED' } };
    const seen = await integrityListing(gateway.url, principals.headers('dev'));
    expect(seen.status).toBe(403);
    expect(seen.body.error).toMatchObject(refusal);
    for (const decision of ['approve', 'reject'] as const) {
      const tried = await integrityDecision(gateway.url, decision, { id: changed.id, hash: changed.hash }, principals.headers('dev'));
      expect(tried.status, decision).toBe(403);
      expect(tried.body.error, decision).toMatchObject(refusal);
    }
    expect((await integrityDecision(gateway.url, 'approve', { ids: [changed.id, added.id] }, principals.headers('dev'))).status).toBe(403);
    // Without credentials: the authentication challenge, before anything else.
    expect((await fetch(`${gateway.url}/integrity`)).status).toBe(401);
    expect((await fetch(`${gateway.url}/integrity/approve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: changed.id }) })).status).toBe(401);

    // Nothing was decided: both still pending, still held from both sessions.
    expect((await integrityListing(gateway.url, principals.headers('ops'))).body.pending!.map((p) => p.id).sort()).toEqual([changed.id, added.id].sort());
    expect(pinFilePending(join(dir, 'state'))).toEqual(['add_note', 'sync_notes']);
    expect((await errorOf(dev.callTool({ name: 'notes__add_note', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });
    expect((await errorOf(ops.callTool({ name: 'notes__add_note', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });

    // The admin approves one and rejects the other: the approved definition serves everyone.
    const approved = await integrityDecision(gateway.url, 'approve', { id: changed.id, hash: changed.hash }, principals.headers('ops'));
    expect(approved.status).toBe(200);
    expect(approved.body.decided).toEqual([changed.id]);
    expect((await integrityDecision(gateway.url, 'reject', { id: added.id }, principals.headers('ops'))).status).toBe(200);
    expect((await integrityListing(gateway.url, principals.headers('ops'))).body.pending).toEqual([]);
    expect(textOf(await dev.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');
    expect((await ops.listTools()).tools.map((t) => t.name).sort()).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);
    expect((await errorOf(dev.callTool({ name: 'notes__sync_notes', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });
  });
});

describe('the strict policy', () => {
  it('refuses every decision without authentication, even from loopback, and leaves the change pending', async () => {
    const dir = scratchDir(cleanup);
    const gateway = await startTestGateway(cleanup, { notes: stdioRug(toolsFile(dir, 'notes', REVIEWED)) }, { policy: 'strict', stateDir: join(dir, 'state') });
    const { client } = await connectClient(cleanup, gateway.url, '2025');
    await rugPull(client, '2025');
    const pending = pinFilePending(join(dir, 'state'));
    expect(pending).toEqual(['add_note', 'sync_notes']);

    const refusal = {
      code: -32600,
      message: 'the policy requires authentication for tool-integrity decisions (toolIntegrity.decisionsRequireAuth); turn auth on',
      data: { code: 'ADMIN_REFUSED' },
    };
    const listed = await integrityListing(gateway.url);
    expect(listed.status).toBe(403);
    expect(listed.body.error).toMatchObject(refusal);
    // The ids are stable (server and tool), so a local process could know them: still refused.
    const ids = pinFileEntries(join(dir, 'state')).map((p) => p.id);
    const tried = await integrityDecision(gateway.url, 'approve', { ids });
    expect(tried.status).toBe(403);
    expect(tried.body.error).toMatchObject(refusal);
    expect(pinFilePending(join(dir, 'state'))).toEqual(pending);
    expect((await errorOf(client.callTool({ name: 'notes__add_note', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });
  });

  it('lets its admin decide once authentication is on', async () => {
    const dir = scratchDir(cleanup);
    const principals = bearerPrincipals('ops', 'dev');
    const strict = JSON.parse(readFileSync(join(ROOT, 'policies', 'strict.json'), 'utf8')) as Record<string, unknown>;
    const gateway = await startGatewayFor(cleanup, principals, { notes: stdioRug(toolsFile(dir, 'notes', REVIEWED)) }, { policy: policyFile({ ...strict, admins: ['ops'] }), stateDir: join(dir, 'state') });
    const { client } = await connectClient(cleanup, gateway.url, '2026', { headers: principals.headers('dev') });
    await rugPull(client, '2026');
    const listed = await integrityListing(gateway.url, principals.headers('ops'));
    expect(listed.body.mode).toBe('hold'); // strict's minimum, with no toolIntegrity in the config
    const changed = listed.body.pending!.find((p) => p.tool === 'add_note')!;
    expect((await integrityDecision(gateway.url, 'approve', { id: changed.id }, principals.headers('dev'))).status).toBe(403);
    // The decision is announced by the gateway itself: an authenticated 2026 listener hears it.
    const heard = collectNotifications(client, 'notifications/tools/list_changed');
    const subscription = await within(client.listen({ toolsListChanged: true }), 10_000, 'subscriptions/listen');
    cleanup.add(() => subscription.close().catch(() => undefined));
    expect((await integrityDecision(gateway.url, 'approve', { id: changed.id, hash: changed.hash }, principals.headers('ops'))).status).toBe(200);
    await heard.waitFor(1);
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['notes__add_note', 'notes__publish', 'notes__read_note']);
    expect(textOf(await client.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');
  });
});
