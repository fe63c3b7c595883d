/**
 * What keeps `perUser` tokens where they belong, through a real gateway with bearer principals in
 * front of real per-user upstreams on 127.0.0.1 (per-user-upstream.ts):
 * - the authenticate and toggle routes act on, and answer with, only what the caller's access
 *   rules and its session's enablement show: a hidden server is answered as an unknown id and its
 *   upstream never sees the caller's token (no token-checking oracle);
 * - a reload that moves a per-user server to another URL drops every session's token for it
 *   before anything reconnects: the new origin never receives a token given for the old one;
 * - a call cut because a new token reopened the connection fails as it failed, not as a refusal;
 * - authenticate has a fixed rate of its own (429 `RATE_LIMITED` with `Retry-After`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { errorOf, textOf } from '../integration/harness/clients.js';
import { rawRequest } from '../integration/harness/raw-http.js';
import { httpServer } from '../integration/harness/upstreams.js';
import { Cleanup } from '../integration/harness/wait.js';
import { find, toggle } from './enablement-helpers.js';
import { startPerUserUpstream, type PerUserUpstream } from './per-user-upstream.js';
import { authenticate, defaultServers, heldTokens, listOf, perUserWorld, userSession, type Item, type World } from './per-user-world.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function otherUpstream(): Promise<PerUserUpstream> {
  const upstream = await startPerUserUpstream();
  cleanup.add(() => upstream.close());
  return upstream;
}

const perUser = (upstream: PerUserUpstream) => httpServer(upstream.url, { upstreamAuth: { kind: 'perUser' } });

/** Bob may use `notes` only; Alice everything. */
const POLICY = {
  access: {
    default: 'deny',
    rules: [
      { name: 'alice-everything', principals: ['alice'], effect: 'allow' },
      { name: 'bob-notes', principals: ['bob'], effect: 'allow', servers: ['notes'] },
    ],
  },
};

async function itemsOf(response: Response): Promise<Item[]> {
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: Item[] }).items;
}

async function codeOf(response: Response): Promise<string> {
  return ((await response.json()) as { error: { data: { code: string } } }).error.data.code;
}

describe('perUser: the authenticate and toggle routes under access rules and enablement', () => {
  it('answers a server hidden from the caller as an unknown id, and never sends its token there', async () => {
    const secret = await otherUpstream();
    const w = await perUserWorld(cleanup, { policy: POLICY, servers: (upstream) => ({ notes: perUser(upstream), secret: perUser(secret) }) });
    const alice = await userSession(cleanup, w, 'alice');
    const bob = await userSession(cleanup, w, 'bob');
    const secretId = find(await listOf(w, alice), 'secret').id as string;
    const notesId = find(await listOf(w, bob), 'notes').id as string;
    expect((await listOf(w, bob)).map((item) => item.name)).toEqual(['notes']);

    // Bob's own server: accepted, and the answer names nothing the rules hide from him.
    const answer = await authenticate(w, bob, { id: notesId, token: 'user-b-token' });
    const text = JSON.stringify(await itemsOf(answer));
    for (const hidden of ['secret', secretId, secret.origin]) expect(text).not.toContain(hidden);

    // The hidden one: exactly what an id that does not exist gets, and nothing reaches its upstream.
    const hidden = await authenticate(w, bob, { id: secretId, token: 'user-b-token' });
    const unknown = await authenticate(w, bob, { id: 'no-such-id', token: 'user-b-token' });
    expect([hidden.status, unknown.status]).toEqual([404, 404]);
    expect(await codeOf(hidden)).toBe('UNKNOWN_CUSTOMIZATION');
    expect(await codeOf(unknown)).toBe('UNKNOWN_CUSTOMIZATION');
    expect(secret.seen.filter((sent) => sent !== undefined)).toEqual([]);
    expect(find(await listOf(w, alice), 'secret').state.kind).toBe('authRequired');

    // Toggle: the same for the hidden id; its answer for his own server names nothing hidden.
    const toggledHidden = await rawRequest(`${w.gateway.url}/customizations/toggle`, {
      method: 'POST',
      headers: { ...w.principals.headers('bob'), 'content-type': 'application/json', 'mcp-session-id': bob.id },
      body: JSON.stringify({ id: secretId, enabled: false, scope: 'session' }),
    });
    expect(toggledHidden.status).toBe(404);
    expect(JSON.parse(toggledHidden.body).error.data.code).toBe('UNKNOWN_CUSTOMIZATION');
    const toggled = await toggle(w.gateway.url, { id: notesId, enabled: true, scope: 'session' }, { ...w.principals.headers('bob'), 'mcp-session-id': bob.id });
    expect(toggled.status).toBe(200);
    for (const hiddenPart of ['secret', secretId, secret.origin]) expect(toggled.body).not.toContain(hiddenPart);
  });

  it('refuses a token for a server the session\'s own enablement hides, before any connection opens', async () => {
    const secret = await otherUpstream();
    const w = await perUserWorld(cleanup, { servers: (upstream) => ({ notes: perUser(upstream), secret: perUser(secret) }) });
    const alice = await userSession(cleanup, w, 'alice');
    const secretId = find(await listOf(w, alice), 'secret').id as string;
    const off = await toggle(w.gateway.url, { id: secretId, enabled: false, scope: 'session' }, { ...w.principals.headers('alice'), 'mcp-session-id': alice.id });
    expect(off.status).toBe(200);
    const refused = await authenticate(w, alice, { id: secretId, token: 'user-a-token' });
    expect(refused.status).toBe(404);
    expect(await codeOf(refused)).toBe('UNKNOWN_CUSTOMIZATION');
    expect(secret.seen.filter((sent) => sent !== undefined)).toEqual([]);
    expect(await heldTokens(w)).toBe(0);
  });
});

describe('perUser: a reload that moves the server', () => {
  it('drops every session\'s token before reconnecting, so the new URL never receives one given for the old', async () => {
    const moved = await otherUpstream();
    const w: World = await perUserWorld(cleanup, { reloadWith: () => ({ ...defaultServers(w.upstream), notes: perUser(moved) }) });
    const a = await userSession(cleanup, w, 'alice');
    const id = find(await listOf(w, a), 'notes').id as string;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    await a.listChanged.waitFor(1);
    expect(textOf(await a.client.callTool({ name: 'notes__whoami', arguments: {} }))).toBe('user A');
    const heard = a.listChanged.items.length;

    const outcome = await w.gateway.reload();
    expect(outcome.applied).toBe(true);
    expect(outcome.restarted).toContain('notes');
    expect(await heldTokens(w)).toBe(0);
    await a.listChanged.waitFor(heard + 1);
    expect(find(await listOf(w, a), 'notes').state.kind).toBe('authRequired');
    const refused = await errorOf(a.client.callTool({ name: 'notes__whoami', arguments: {} }));
    expect(refused.data).toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED' });
    expect(moved.seen).not.toContain('Bearer user-a-token');

    // A token given now goes to the server as it is.
    expect((await authenticate(w, a, { id, token: 'user-b-token' })).status).toBe(200);
    expect(textOf(await a.client.callTool({ name: 'notes__whoami', arguments: {} }))).toBe('user B');
    expect(moved.seen).toContain('Bearer user-b-token');
    expect(moved.seen).not.toContain('Bearer user-a-token');
  });

  it('drops every session\'s token for a server the reload removes', async () => {
    const w: World = await perUserWorld(cleanup, { reloadWith: () => ({ plain: defaultServers(w.upstream).plain }) });
    const a = await userSession(cleanup, w, 'alice');
    const b = await userSession(cleanup, w, 'bob');
    const id = find(await listOf(w, a), 'notes').id as string;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    expect((await authenticate(w, b, { id, token: 'user-b-token' })).status).toBe(200);
    expect(await heldTokens(w)).toBe(2);
    const outcome = await w.gateway.reload();
    expect(outcome.removed).toEqual(['notes']);
    expect(await heldTokens(w)).toBe(0);
  });
});

describe('perUser: a call cut by a new token', () => {
  it('fails as it failed, not as a refusal, and the new token and its connection stay', async () => {
    const w = await perUserWorld(cleanup);
    const a = await userSession(cleanup, w, 'alice');
    const id = find(await listOf(w, a), 'notes').id as string;
    expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    const inFlight = errorOf(a.client.callTool({ name: 'notes__hold', arguments: {} }));
    await w.upstream.holding();
    // The new token reopens the session's connection: the call on the old one is cut.
    expect((await authenticate(w, a, { id, token: 'user-b-token' })).status).toBe(200);
    const cut = await inFlight;
    // The connection it was on closed under it: unavailable, as any closed connection's call.
    expect(cut.data).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(cut.message).not.toContain('refused');
    expect(await heldTokens(w)).toBe(1);
    expect(find(await listOf(w, a), 'notes').state.kind).toBe('ready');
    expect(textOf(await a.client.callTool({ name: 'notes__whoami', arguments: {} }))).toBe('user B');
  });
});

describe('perUser: authenticate\'s own rate', () => {
  it('answers 429 RATE_LIMITED with Retry-After past 10 a minute for one session and server', async () => {
    const w = await perUserWorld(cleanup);
    const a = await userSession(cleanup, w, 'alice');
    const other = await userSession(cleanup, w, 'alice');
    const id = find(await listOf(w, a), 'notes').id as string;
    for (let attempt = 0; attempt < 10; attempt++) expect((await authenticate(w, a, { id, token: 'user-a-token' })).status).toBe(200);
    const limited = await authenticate(w, a, { id, token: 'user-a-token' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await codeOf(limited)).toBe('RATE_LIMITED');
    // Another session of the same principal has its own budget for the server.
    expect((await authenticate(w, other, { id, token: 'user-b-token' })).status).toBe(200);
  });

  it('answers 429 past 60 attempts a minute by one principal, whatever they name; another principal is unaffected', async () => {
    const w = await perUserWorld(cleanup);
    const a = await userSession(cleanup, w, 'alice');
    const b = await userSession(cleanup, w, 'bob');
    // The budget refills at one a second, so on a slow machine a few more than 60 may pass before
    // the refusal: the bound is 60 plus what refilled while the attempts ran, never more.
    const started = Date.now();
    let allowed = 0;
    let limited: Response | undefined;
    while (allowed <= 200) {
      const answer = await authenticate(w, a, { id: 'no-such-id', token: 'user-a-token' });
      if (answer.status === 429) {
        limited = answer;
        break;
      }
      expect(answer.status).toBe(404);
      allowed++;
    }
    expect(limited).toBeDefined();
    expect(allowed).toBeGreaterThanOrEqual(60);
    expect(allowed).toBeLessThanOrEqual(60 + Math.ceil((Date.now() - started) / 1000));
    expect(await codeOf(limited!)).toBe('RATE_LIMITED');
    const id = find(await listOf(w, b), 'notes').id as string;
    expect((await authenticate(w, b, { id, token: 'user-b-token' })).status).toBe(200);
  });
});
