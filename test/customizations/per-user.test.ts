/**
 * `upstreamAuth: { kind: "perUser" }` against a real MCP server on 127.0.0.1 that demands each
 * user's own bearer token (per-user-upstream.ts), through a real gateway with bearer principals
 * and SDK v2 clients of both eras: a session without a token sees the server `authRequired` and
 * cannot reach it; `POST /mcp/customizations/authenticate` gives its session a token, the session
 * hears `tools/list_changed` and reaches the upstream as that user — never another session's;
 * a revoked token is dropped; a session's tokens leave with it; hostile bodies are refused; and
 * no token ever reaches a log line.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, errorOf, sideChannelUrl, textOf } from '../integration/harness/clients.js';
import { Cleanup, waitUntil } from '../integration/harness/wait.js';
import { authenticate, heldTokens, listOf as listFor, perUserWorld, userSession, type Item, type Session, type World } from './per-user-world.js';
import { openWatch } from './watch-reader.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const world = (extra: Record<string, unknown> = {}): Promise<World> => perUserWorld(cleanup, { extra });
const session = (w: World, principal: string, url = w.gateway.url): Promise<Session> => userSession(cleanup, w, principal, url);
const listOf = (w: World, s: Session): Promise<Item[]> => listFor(w, s);

async function notesOf(w: World, s: Session): Promise<Item> {
  return (await listOf(w, s)).find((item) => item.name === 'notes')!;
}

async function toolNames(s: Session): Promise<string[]> {
  return (await s.client.listTools()).tools.map((tool) => tool.name);
}

async function whoami(s: Session): Promise<string> {
  return textOf(await s.client.callTool({ name: 'notes__whoami', arguments: {} }));
}

describe('perUser: an upstream that demands each user\'s own token', () => {
  it('serves each session as the user whose token it gave, and no session with another\'s', async () => {
    const w = await world();
    const a = await session(w, 'alice');
    const b = await session(w, 'bob');
    const alsoAlice = await session(w, 'alice');

    // No token yet: authRequired with the upstream's RFC 9728 metadata and scopes; nothing listed.
    const before = await notesOf(w, a);
    expect(before.state).toEqual({
      kind: 'authRequired',
      reason: 'required',
      resource: { resource: `${w.upstream.origin}/mcp`, authorization_servers: [`${w.upstream.origin}/as`], scopes_supported: ['notes:read'], resource_name: 'Per-user notes' },
      requiredScopes: ['notes:read'],
      description: 'server "notes" needs authorization',
    });
    expect(await toolNames(a)).not.toContain('notes__whoami');
    const refused = await errorOf(a.client.callTool({ name: 'notes__whoami', arguments: {} }));
    expect(refused.data).toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED' });
    expect(refused.message).toContain('customizations/authenticate');

    // The session's own watch stream follows its own state of the server.
    const watch = await openWatch(`${w.gateway.url}/customizations`, { ...w.principals.headers('alice'), 'mcp-session-id': a.id });
    cleanup.add(() => watch.close());
    expect((await watch.next()).items.find((item) => item.name === 'notes')!.state).toMatchObject({ kind: 'authRequired' });

    const answer = await authenticate(w, a, { id: before.id, token: 'user-a-token' });
    expect(answer.status).toBe(200);
    const answered = ((await answer.json()) as { items: Item[] }).items.find((item) => item.name === 'notes')!;
    expect(answered.state).toEqual({ kind: 'ready' });
    for (;;) {
      const state = (await watch.next()).items.find((item) => item.name === 'notes')!.state as Item;
      if (state.kind === 'ready') break;
      expect(state.kind).toMatch(/^(authRequired|starting)$/);
    }
    await a.listChanged.waitFor(1);
    expect(await toolNames(a)).toContain('notes__whoami');
    expect(await whoami(a)).toBe('user A');

    // Another principal's session, and another session of the same principal, have no token.
    for (const other of [b, alsoAlice]) {
      expect((await notesOf(w, other)).state.kind).toBe('authRequired');
      expect(await toolNames(other)).not.toContain('notes__whoami');
      expect((await errorOf(other.client.callTool({ name: 'notes__whoami', arguments: {} }))).data).toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED' });
    }

    expect((await authenticate(w, b, { id: before.id, token: 'user-b-token' })).status).toBe(200);
    await b.listChanged.waitFor(1);
    expect(await whoami(b)).toBe('user B');
    expect(await whoami(a)).toBe('user A');
    expect((await notesOf(w, alsoAlice)).state.kind).toBe('authRequired');
    expect(await heldTokens(w)).toBe(2);
    // A caller without a session sees the server as the primary does.
    const sessionless = await fetch(`${w.gateway.url}/customizations`, { headers: w.principals.headers('alice') });
    expect(((await sessionless.json()) as { items: Item[] }).items.find((item) => item.name === 'notes')!.state.kind).toBe('authRequired');

    // What reached the upstream: the users' tokens or nothing, never a gateway principal's token.
    const gatewayTokens = ['alice', 'bob'].map((name) => w.principals.headers(name).Authorization!);
    for (const sent of w.upstream.seen) {
      expect(sent === undefined || sent === 'Bearer user-a-token' || sent === 'Bearer user-b-token').toBe(true);
      expect(gatewayTokens).not.toContain(sent);
    }
    // No log line holds a user's token, at any level.
    const logged = JSON.stringify(w.lines);
    expect(logged).not.toContain('user-a-token');
    expect(logged).not.toContain('user-b-token');
  });

  it('reports the server as /readyz and the sessionless list both do: authRequired, and up', async () => {
    const w = await world();
    const headers = w.principals.headers('alice');
    const readyz = await fetch(w.gateway.url.replace(/\/mcp$/, '/readyz'), { headers });
    expect(readyz.status).toBe(200);
    const servers = ((await readyz.json()) as { servers: Array<{ server: string; state: string }> }).servers;
    expect(servers.find((s) => s.server === 'notes')?.state).toBe('authRequired');
    const list = await fetch(`${w.gateway.url}/customizations`, { headers });
    const items = ((await list.json()) as { items: Item[] }).items;
    expect(items.find((item) => item.name === 'notes')?.state).toMatchObject({ kind: 'authRequired' });
  });

  it('takes a token for a side channel session the same way, for that session only', async () => {
    const w = await world();
    const channel = await session(w, 'alice', sideChannelUrl(w.gateway.url, 'notes'));
    const aggregate = await session(w, 'alice');
    const id = (await notesOf(w, aggregate)).id;
    expect((await authenticate(w, channel, { id, token: 'user-b-token' })).status).toBe(200);
    await channel.listChanged.waitFor(1);
    expect(textOf(await channel.client.callTool({ name: 'whoami', arguments: {} }))).toBe('user B');
    expect((await notesOf(w, aggregate)).state.kind).toBe('authRequired');
  });

  it('drops a token the upstream refuses: the call says to authenticate again and the list shows authRequired', async () => {
    const w = await world();
    const a = await session(w, 'alice');
    const id = (await notesOf(w, a)).id;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    await a.listChanged.waitFor(1);
    expect(await whoami(a)).toBe('user A');

    w.upstream.revoke('user-a-token');
    const refused = await errorOf(a.client.callTool({ name: 'notes__whoami', arguments: {} }));
    expect(refused.data).toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED' });
    expect(refused.message).toMatch(/refused this session's credential \(expired\); it was dropped.*authenticate/);
    expect(refused.data).toMatchObject({ reason: 'expired' });
    expect(refused.message).not.toContain('user-a-token');
    expect(await heldTokens(w)).toBe(0);
    await a.listChanged.waitFor(2);
    expect((await notesOf(w, a)).state).toMatchObject({ kind: 'authRequired', reason: 'expired', requiredScopes: ['notes:read'] });
    expect(await toolNames(a)).not.toContain('notes__whoami');

    // The revoked token again: the upstream refuses it at once, and it is not kept.
    const again = await authenticate(w, a, { id, token: 'user-a-token' });
    expect(again.status).toBe(502);
    const body = (await again.json()) as { error: { message: string; data: { code: string } } };
    expect(body.error.data.code).toBe('UPSTREAM_AUTH_REQUIRED');
    expect(JSON.stringify(body)).not.toContain('user-a-token');
    expect(await heldTokens(w)).toBe(0);

    // Refused tokens in a row never make the next one wait out a backoff.
    for (let attempt = 0; attempt < 6; attempt++) expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(502);
    expect((await authenticate(w, a, { id, token: 'user-b-token' })).status).toBe(200);
    expect(await whoami(a)).toBe('user B');
    expect(JSON.stringify(w.lines)).not.toContain('user-a-token');
  });

  it('says a token was refused, not missing, when the connection\'s own stream met the refusal before any call', async () => {
    const w = await world();
    const a = await session(w, 'alice');
    const id = (await notesOf(w, a)).id;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    await a.listChanged.waitFor(1);
    expect(await whoami(a)).toBe('user A');
    await waitUntil(() => w.upstream.streamRequests > 0, "the session connection's standalone stream");

    // Revoked, and the stream cut: its reconnect carries the token and meets the 401 with no call open.
    w.upstream.revoke('user-a-token');
    const before = w.upstream.streamRequests;
    w.upstream.cutStreams();
    await waitUntil(async () => (await heldTokens(w)) === 0, 'the token dropped on the stream');
    expect(w.upstream.streamRequests).toBeGreaterThan(before);
    await a.listChanged.waitFor(2);
    expect((await notesOf(w, a)).state).toMatchObject({ kind: 'authRequired', reason: 'expired', requiredScopes: ['notes:read'] });

    // The next call never goes out without a token, and says why there is none: the upstream refused it.
    const sent = w.upstream.seen.length;
    const refused = await errorOf(a.client.callTool({ name: 'notes__whoami', arguments: {} }));
    expect(refused.data).toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED', reason: 'expired' });
    expect(refused.message).toMatch(/refused this session's credential \(expired\); it was dropped.*authenticate/);
    expect(w.upstream.seen.slice(sent).filter((header) => header !== undefined && header.includes('user-a-token'))).toEqual([]);

    // A new token clears the refusal: the session is served again, as that user.
    expect((await authenticate(w, a, { id, token: 'user-b-token' })).status).toBe(200);
    expect(await whoami(a)).toBe('user B');
    expect(JSON.stringify(w.lines)).not.toContain('user-a-token');
  });

  it('holds nothing for a session once it ends, and refuses its id afterwards', async () => {
    const w = await world();
    const a = await session(w, 'alice');
    const b = await session(w, 'bob');
    const id = (await notesOf(w, a)).id;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    expect((await authenticate(w, b, { id, token: 'user-b-token' })).status).toBe(200);
    expect(await heldTokens(w)).toBe(2);

    await a.transport.terminateSession();
    expect(await heldTokens(w)).toBe(1);
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(404);
    expect(await heldTokens(w)).toBe(1);
    await b.transport.terminateSession();
    expect(await heldTokens(w)).toBe(0);
  });

  it('holds nothing for a session whose client hung up without DELETE, once the session expires', async () => {
    const w = await world({ sessions: { idleTimeoutMs: 400 } });
    const a = await session(w, 'alice');
    const id = (await notesOf(w, a)).id;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    expect(await heldTokens(w)).toBe(1);
    // Gone without a word: its standalone stream closes, no DELETE is sent.
    await a.client.close();
    await waitUntil(async () => (await heldTokens(w)) === 0, 'the expired session\'s token dropped');
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(404);
  });

  it('refuses hostile bodies and other principals\' sessions without keeping or echoing a token', async () => {
    const w = await world();
    const a = await session(w, 'alice');
    const items = await listOf(w, a);
    const id = items.find((item) => item.name === 'notes')!.id;
    const plainId = items.find((item) => item.name === 'plain')!.id;
    const cases: Array<{ as: { principal: string; id: string | undefined }; body: unknown; status: number; code?: string }> = [
      { as: a, body: { id, token: 'a'.repeat(16 * 1024 + 1) }, status: 400, code: 'INVALID_PARAMS' },
      { as: a, body: { id, token: 'b'.repeat(64 * 1024) }, status: 413 },
      { as: a, body: { id: 7, token: 'user-a-token' }, status: 400, code: 'INVALID_PARAMS' },
      { as: a, body: { id, token: ['user-a-token'] }, status: 400, code: 'INVALID_PARAMS' },
      { as: a, body: { id, token: 'user-a-token', scope: 'global' }, status: 400, code: 'INVALID_PARAMS' },
      { as: a, body: { id, token: 'user-a-token\r\nX-Injected: yes' }, status: 400, code: 'INVALID_PARAMS' },
      { as: a, body: [{ id, token: 'user-a-token' }], status: 400 },
      { as: a, body: '{"id":', status: 400 },
      { as: { principal: 'alice', id: undefined }, body: { id, token: 'user-a-token' }, status: 400, code: 'SESSION_ID_REQUIRED' },
      // Bob presenting Alice's live session id is told it does not exist.
      { as: { principal: 'bob', id: a.id }, body: { id, token: 'user-b-token' }, status: 404, code: 'SESSION_NOT_FOUND' },
      { as: a, body: { id: 'not-an-id', token: 'user-a-token' }, status: 404, code: 'UNKNOWN_CUSTOMIZATION' },
      { as: a, body: { id: plainId, token: 'user-a-token' }, status: 400, code: 'INVALID_PARAMS' },
    ];
    for (const { as, body, status, code } of cases) {
      const response = await authenticate(w, as, body);
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      const text = await response.text();
      expect(text).not.toContain('user-a-token');
      expect(text).not.toContain('X-Injected');
      expect(text).not.toContain('aaaaaaaa');
      if (code !== undefined) expect((JSON.parse(text) as { error: { data: { code: string } } }).error.data.code).toBe(code);
    }
    expect((await fetch(`${w.gateway.url}/customizations/authenticate`, { headers: w.principals.headers('alice') })).status).toBe(405);
    expect(await heldTokens(w)).toBe(0);
    expect((await notesOf(w, a)).state.kind).toBe('authRequired');
    expect(JSON.stringify(w.lines)).not.toContain('user-a-token');
  });

  it('refuses a 2026-era request for a per-user server: only a 2025 session can hold a user\'s token', async () => {
    const w = await world();
    const modern = await connectClient(cleanup, w.gateway.url, '2026', { headers: w.principals.headers('alice') });
    expect((await modern.client.listTools()).tools.map((tool) => tool.name)).not.toContain('notes__whoami');
    const refused = await errorOf(modern.client.callTool({ name: 'notes__whoami', arguments: {} }));
    expect(refused.data).toMatchObject({ code: 'INVALID_REQUEST' });
    expect(refused.message).toContain('2025-era session');
    expect(w.upstream.seen.every((sent) => sent === undefined)).toBe(true);
  });
});
