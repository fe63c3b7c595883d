/**
 * The pure and in-memory parts of per-user upstream credentials: the token store (one token per
 * live session and server, only for the session's own principal, dropped by a 401 of that very
 * token and by the session's end), the authenticate body check (table-driven, never echoing a
 * token), the state a session's list shows, and the config rule that perUser needs session
 * isolation.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { parseAuthenticate } from '../../src/customizations/authenticate-route.js';
import { perUserPrimaryState, perUserState } from '../../src/customizations/server-state.js';
import { UpstreamError } from '../../src/errors.js';
import type { McpServerState } from '../../src/customizations/types.js';
import { UpstreamAuthRequired } from '../../src/upstream/auth-required.js';
import { MAX_UPSTREAM_TOKEN_LENGTH } from '../../src/net/bearer-token.js';
import { UserTokens, type UserSessionHooks } from '../../src/upstream/credentials/user-tokens.js';

const resource = { resource: 'https://notes.example.com/mcp', authorization_servers: ['https://as.example.com'] };
const refusal = new UpstreamAuthRequired('notes', { reason: 'expired', resourceMetadata: 'https://notes.example.com/.well-known/oauth-protected-resource/mcp', scopes: ['notes:read'] }, resource);

function hooks(changes: string[] = [], hidden: ReadonlySet<string> = new Set()): UserSessionHooks {
  return {
    reconnect: async () => undefined,
    connection: () => ({ state: 'ready', lastError: undefined }),
    changed: (server) => changes.push(server),
    visible: (server) => !hidden.has(server),
  };
}

describe('the token store', () => {
  it('holds one token per session and server, for the session\'s own principal only', async () => {
    const store = new UserTokens();
    store.attach('s1', 'alice', ['notes'], hooks());
    store.attach('s2', 'bob', ['notes'], hooks());
    expect(store.set('s1', 'bob', 'notes', 'a')).toBe('unknownSession');
    expect(store.set('gone', 'alice', 'notes', 'a')).toBe('unknownSession');
    expect(store.set('s1', 'alice', 'other', 'a')).toBe('notReached');
    expect(store.size).toBe(0);
    expect(store.set('s1', 'alice', 'notes', 'first')).toBe('accepted');
    expect(store.set('s1', 'alice', 'notes', 'second')).toBe('accepted');
    expect(store.size).toBe(1);
    expect(await store.sourceFor('s1', 'notes').token()).toBe('second');
    await expect(store.sourceFor('s2', 'notes').token()).rejects.toMatchObject({ code: 'UPSTREAM_AUTH_REQUIRED' });
    expect(() => store.set('s1', 'alice', 'notes', 'x'.repeat(MAX_UPSTREAM_TOKEN_LENGTH + 1))).toThrow(RangeError);
  });

  it('drops a token the upstream refused, but not one set since', () => {
    const store = new UserTokens();
    const changes: string[] = [];
    store.attach('s1', undefined, ['notes'], hooks(changes));
    store.set('s1', undefined, 'notes', 'old');
    store.set('s1', undefined, 'notes', 'new');
    store.sourceFor('s1', 'notes').invalidate('old');
    expect(store.has('s1', 'notes')).toBe(true);
    store.sourceFor('s1', 'notes').invalidate('new');
    expect(store.has('s1', 'notes')).toBe(false);
    expect(changes).toEqual(['notes', 'notes', 'notes']);
  });

  it('holds nothing of a session once it is detached, and tells the list', () => {
    const store = new UserTokens();
    let heard = 0;
    store.onChange(() => heard++);
    const detach = store.attach('s1', 'alice', ['notes', 'wiki'], hooks());
    store.set('s1', 'alice', 'notes', 'a');
    store.set('s1', 'alice', 'wiki', 'b');
    store.refused('s1', 'wiki', 'b', refusal);
    const before = heard;
    detach();
    expect(store.size).toBe(0);
    expect(store.view('s1', 'notes')).toBeUndefined();
    expect(heard).toBe(before + 1);
    expect(store.set('s1', 'alice', 'notes', 'a')).toBe('unknownSession');
  });

  it('holds no token for a server the session does not see', () => {
    const store = new UserTokens();
    store.attach('s1', 'alice', ['notes', 'secret'], hooks([], new Set(['secret'])));
    expect(store.set('s1', 'alice', 'secret', 'a')).toBe('hidden');
    expect(store.has('s1', 'secret')).toBe(false);
    // Who asks is checked first: another principal learns nothing of what the session sees.
    expect(store.set('s1', 'bob', 'secret', 'a')).toBe('unknownSession');
  });

  it('drops every session\'s token for a server at once, and tells each session and the list', () => {
    const store = new UserTokens();
    let heard = 0;
    store.onChange(() => heard++);
    const first: string[] = [];
    const second: string[] = [];
    store.attach('s1', 'alice', ['notes', 'wiki'], hooks(first));
    store.attach('s2', 'bob', ['notes'], hooks(second));
    store.set('s1', 'alice', 'notes', 'a');
    store.set('s1', 'alice', 'wiki', 'w');
    store.set('s2', 'bob', 'notes', 'b');
    const before = { heard, first: first.length, second: second.length };
    store.dropServer('notes');
    expect([store.has('s1', 'notes'), store.has('s2', 'notes'), store.has('s1', 'wiki')]).toEqual([false, false, true]);
    expect(first.slice(before.first)).toEqual(['notes']);
    expect(second.slice(before.second)).toEqual(['notes']);
    expect(heard).toBe(before.heard + 1);
    store.dropServer('notes');
    expect(heard).toBe(before.heard + 1);
  });

  it('tells a 401 to the token a call went out with from any other failure, until a token is set again', () => {
    const store = new UserTokens();
    store.attach('s1', 'alice', ['notes'], hooks());
    store.set('s1', 'alice', 'notes', 'a');
    expect(store.wasRefused('s1', 'notes', 'a')).toBe(false);
    store.sourceFor('s1', 'notes').invalidate('a');
    expect(store.wasRefused('s1', 'notes', 'a')).toBe(true);
    expect(store.wasRefused('s1', 'notes', 'b')).toBe(false);
    store.set('s1', 'alice', 'notes', 'a');
    expect(store.wasRefused('s1', 'notes', 'a')).toBe(false);
  });
});

describe('the state a session\'s list shows of a per-user server', () => {
  const primary: McpServerState = { kind: 'authRequired', reason: 'required', resource, description: 'server "notes" needs authorization' };
  it.each([
    ['no token: the primary\'s challenge', { hasToken: false, refusal: undefined, connection: undefined }, primary],
    ['no token after a refusal: that refusal', { hasToken: false, refusal, connection: undefined }, { kind: 'authRequired', reason: 'expired', resource, requiredScopes: ['notes:read'], description: 'server "notes" refused its credential as invalid or expired' }],
    ['a token, connecting', { hasToken: true, refusal: undefined, connection: { state: 'idle' as const, lastError: undefined } }, { kind: 'starting' }],
    ['a token, connected', { hasToken: true, refusal: undefined, connection: { state: 'ready' as const, lastError: undefined } }, { kind: 'ready' }],
  ])('%s', (_, view, expected) => {
    expect(perUserState('notes', view, primary)).toEqual(expected);
  });
});

describe('the primary\'s state of a per-user server', () => {
  it('stays authRequired while the token-less primary retries after a challenge', () => {
    expect(perUserPrimaryState('notes', 'connecting', refusal)).toMatchObject({ kind: 'authRequired', reason: 'expired' });
    expect(perUserPrimaryState('notes', 'error', refusal)).toMatchObject({ kind: 'authRequired', reason: 'expired' });
  });

  it('shows every other retry as starting, like any server', () => {
    expect(perUserPrimaryState('notes', 'connecting', undefined)).toEqual({ kind: 'starting' });
    expect(perUserPrimaryState('notes', 'connecting', new UpstreamError('UPSTREAM_UNAVAILABLE', 'notes', 'failed'))).toEqual({ kind: 'starting' });
    expect(perUserPrimaryState('notes', 'ready', refusal)).toEqual({ kind: 'ready' });
  });
});

describe('the authenticate body', () => {
  const id = 'abcdefghijklmnopqrstuv';
  it.each([
    ['not an object', 'token', /an object/],
    ['an array', [{ id, token: 't' }], /an object/],
    ['an unknown field', { id, token: 't', scope: 'global' }, /unknown field "scope"/],
    ['an id that is not a string', { id: 7, token: 't' }, /"id"/],
    ['an empty token', { id, token: '' }, /"token"/],
    ['a token that is not a string', { id, token: { value: 't' } }, /"token"/],
    ['a token over 16 KiB', { id, token: 'a'.repeat(MAX_UPSTREAM_TOKEN_LENGTH + 1) }, /at most 16384 bytes/],
    ['a token with CR LF', { id, token: 'secret-part\r\nX-Injected: 1' }, /bearer token/],
    ['a token with a quote', { id, token: 'secret-part"' }, /bearer token/],
    ['a token with a space', { id, token: 'secret part' }, /bearer token/],
  ])('refuses %s, without echoing it', (_, body, message) => {
    const checked = parseAuthenticate(body);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.message).toMatch(message);
    expect(checked.message).not.toContain('secret');
    expect(checked.message).not.toContain('aaaa');
  });

  it('accepts an RFC 6750 token, a JWT among them', () => {
    const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl';
    expect(parseAuthenticate({ id, token: jwt })).toEqual({ ok: true, value: { id, token: jwt } });
    expect(parseAuthenticate({ id, token: 'abc+/~-._==' })).toMatchObject({ ok: true });
  });
});

describe('configuration', () => {
  const perUser = { transport: 'streamableHttp', url: 'https://notes.example.com/mcp', upstreamAuth: { kind: 'perUser' } };
  it('takes perUser on a session-isolated server', () => {
    expect(parseConfig({ servers: { notes: perUser } }).servers.notes).toMatchObject({ upstreamAuth: { kind: 'perUser' }, isolation: 'session' });
  });

  it.each(['shared', 'principal'])('refuses perUser with isolation "%s", saying why', (isolation) => {
    expect(() => parseConfig({ servers: { notes: { ...perUser, isolation } } })).toThrow(/servers\.notes\.upstreamAuth: per-user credentials need isolation "session"/);
  });

  it('refuses fields perUser does not have', () => {
    expect(() => parseConfig({ servers: { notes: { ...perUser, upstreamAuth: { kind: 'perUser', tokenUrl: 'https://as.example.com/token' } } } })).toThrow(/upstreamAuth/);
  });
});
