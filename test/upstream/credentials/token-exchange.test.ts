/**
 * The token exchange's bookkeeping against a real token endpoint on 127.0.0.1 that records each
 * RFC 8693 request and answers one token per request: which principal's subject each exchange
 * carried, when it is reused or exchanged again (a clock the test moves), one exchange however
 * many wait, the refusals that need no request at all; and the subject-token store's bounds.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { outsideAnyRequest, SubjectTokens, type SubjectClaims } from '../../../src/upstream/credentials/subject-tokens.js';
import { ACCESS_TOKEN_TYPE, FAILURE_MEMORY_MS, TOKEN_EXCHANGE_GRANT, tokenExchange, type TokenExchangeOptions } from '../../../src/upstream/credentials/token-exchange.js';
import { waitUntil } from '../../integration/harness/wait.js';
import { exchanged, SECRET, startTokenEndpoint, type TokenEndpoint } from './token-endpoint-fixture.js';

/** Records `token` as `principal`'s latest, as a request authenticated with it does. */
function remember(store: SubjectTokens, principal: string, token: string, claims: SubjectClaims): void {
  store.run(principal, token, claims, () => undefined);
}

/** The inbound issuer whose tokens the token endpoint exchanges. */
const ISSUER = 'https://idp-a.example.com';
let endpoint: TokenEndpoint;
let tokenUrl = '';
/** Each request's form, in arrival order. */
let requests: URLSearchParams[] = [];

beforeAll(async () => {
  endpoint = await startTokenEndpoint();
  tokenUrl = endpoint.url;
  requests = endpoint.requests;
});
afterAll(() => endpoint.close());

let clock = 1_000_000;
const now = () => clock;
const exp = (msFromNow: number) => (clock + msFromNow) / 1000;

function setup(overrides: Partial<TokenExchangeOptions> = {}) {
  const subjects = new SubjectTokens({ now });
  /** The subject token of each exchange started, in order: recorded as the request is sent. */
  const started: string[] = [];
  const exchange = tokenExchange({
    server: 'crm',
    upstreamUrl: 'https://crm.example.com/mcp',
    config: { tokenUrl, clientId: 'client', clientSecretEnv: 'SECRET_VAR', scope: 'crm:read' },
    issuer: ISSUER,
    subjects,
    readEnv: (name) => (name === 'SECRET_VAR' ? SECRET : undefined),
    fetch: (url, init) => {
      started.push(new URLSearchParams(String(init?.body)).get('subject_token') ?? '');
      return fetch(url, init);
    },
    now,
    ...overrides,
  });
  return { subjects, exchange, started };
}

beforeEach(() => {
  endpoint.reset();
  clock = 1_000_000;
});

describe('tokenExchange', () => {
  it('exchanges each principal\'s own subject token, and a connection only ever gets its principal\'s', async () => {
    const { subjects, exchange } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    remember(subjects, 'bob', 'subject-bob', { exp: exp(3_600_000), iss: ISSUER });
    const alice = exchange.forPrincipal('alice');
    const bob = exchange.forPrincipal('bob');
    const [a1, b1, a2, b2] = await Promise.all([alice.token(), bob.token(), alice.token(), bob.token()]);
    expect(a1).toMatch(/^exchanged-subject-alice-/);
    expect(b1).toMatch(/^exchanged-subject-bob-/);
    expect([a2, b2]).toEqual([a1, b1]);
    expect(requests).toHaveLength(2);
    const form = requests.find((f) => f.get('subject_token') === 'subject-alice')!;
    expect(Object.fromEntries(form)).toEqual({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: 'subject-alice',
      subject_token_type: ACCESS_TOKEN_TYPE,
      resource: 'https://crm.example.com/mcp',
      scope: 'crm:read',
    });
  });

  it('makes one exchange however many requests of a principal wait for it', async () => {
    const { subjects, exchange, started } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    let release!: () => void;
    endpoint.hold = new Promise((resolve) => (release = resolve));
    const waiting = Array.from({ length: 10 }, () => exchange.forPrincipal('alice').token());
    // All ten asked while the one exchange is in flight (its answer held): one request sent.
    expect(started).toEqual(['subject-alice']);
    release();
    expect(new Set(await Promise.all(waiting)).size).toBe(1);
    expect(requests).toHaveLength(1);
  });

  it('exchanges again for a new subject token, and never uses one past its subject\'s exp', async () => {
    const { subjects, exchange } = setup();
    const alice = exchange.forPrincipal('alice');
    remember(subjects, 'alice', 'subject-old', { exp: exp(60_000), iss: ISSUER });
    const first = await alice.token();
    remember(subjects, 'alice', 'subject-new', { exp: exp(3_600_000), iss: ISSUER });
    const second = await alice.token();
    expect(second).toMatch(/^exchanged-subject-new-/);
    expect(second).not.toBe(first);
    // The new subject's exchange is capped by nothing shorter: reused well past the old one's exp.
    clock += 120_000;
    expect(await alice.token()).toBe(second);
    expect(requests).toHaveLength(2);
  });

  it('renews ahead of expiry in the background, and a dropped token once per cooldown', async () => {
    const { subjects, exchange, started } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    const alice = exchange.forPrincipal('alice');
    const first = await alice.token();
    clock += 600_000 - 30_000; // inside the last minute of its life: still served, renewed meanwhile
    expect(await alice.token()).toBe(first);
    expect(started).toHaveLength(2);
    // The renewal's answer lands in a cache nothing outside observes: polled, bounded.
    const renewed = await waitUntil(async () => {
      const token = await alice.token();
      return token !== first && token;
    }, 'the renewed token being served', 5_000);
    expect(requests).toHaveLength(2);
    alice.invalidate(renewed);
    const replaced = await alice.token();
    expect(replaced).not.toBe(renewed);
    alice.invalidate(replaced); // within the cooldown: kept
    expect(await alice.token()).toBe(replaced);
    // Another principal's token is never dropped by this principal's refusal.
    alice.invalidate('exchanged-subject-bob-1');
    expect(requests).toHaveLength(3);
  });

  it('refuses without a request when the principal has no live subject token, or the connection has no principal', async () => {
    const { subjects, exchange } = setup();
    await expect(exchange.forPrincipal('alice').token()).rejects.toThrow(/upstream "crm": the gateway holds no live access token of this caller.*authenticate again/);
    remember(subjects, 'alice', 'subject-alice', { exp: exp(1_000), iss: ISSUER });
    clock += 1_000;
    await expect(exchange.forPrincipal('alice').token()).rejects.toThrow(/no live access token/);
    await expect(exchange.forPrincipal(undefined).token()).rejects.toThrow(/upstream "crm": is reached only on a principal's own connection/);
    expect(requests).toHaveLength(0);
  });

  it('names the server and the OAuth error code of a refused exchange, never a token or the secret', async () => {
    const { subjects, exchange } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    endpoint.answer = () => ({ status: 400, body: { error: 'invalid_grant', error_description: 'subject-alice is revoked' } });
    const error = await exchange.forPrincipal('alice').token().then(() => new Error('no refusal'), (e: unknown) => e as Error);
    expect(error.message).toBe('upstream "crm": could not get an access token for the upstream: the token endpoint answered HTTP 400 (invalid_grant)');
    const missing = setup({ readEnv: () => undefined });
    remember(missing.subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    await expect(missing.exchange.forPrincipal('alice').token()).rejects.toThrow(/SECRET_VAR is not set/);
  });
});

describe('the subject of a call', () => {
  it("is the token of the request that carries it: a principal's two tokens, used alternately, are each exchanged for their own", async () => {
    const { subjects, exchange } = setup();
    const alice = exchange.forPrincipal('alice');
    const broad = { exp: exp(3_600_000), iss: ISSUER };
    // Both authenticated before either call reaches the upstream: the latest is the narrow one.
    const calls = ['subject-broad', 'subject-narrow', 'subject-broad', 'subject-narrow'].map((token) => subjects.run('alice', token, broad, () => alice.token()));
    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.replace(/-\d+$/, ''))).toEqual(['exchanged-subject-broad', 'exchanged-subject-narrow', 'exchanged-subject-broad', 'exchanged-subject-narrow']);
    // One exchange per subject token, each cached for its own.
    expect(requests.map((f) => f.get('subject_token')).sort()).toEqual(['subject-broad', 'subject-narrow']);
    expect(await subjects.run('alice', 'subject-broad', broad, () => alice.token())).toBe(answers[0]);
    expect(requests).toHaveLength(2);
  });

  it("is never another of the principal's tokens once the request's own has lapsed; traffic no request owns gets the latest", async () => {
    const { subjects, exchange } = setup();
    const alice = exchange.forPrincipal('alice');
    remember(subjects, 'alice', 'subject-latest', { exp: exp(3_600_000), iss: ISSUER });
    // Expired, though inside the inbound clock tolerance: not exchanged, and not swapped for the latest.
    await expect(subjects.run('alice', 'subject-lapsed', { exp: exp(-1_000), iss: ISSUER }, () => alice.token())).rejects.toThrow(/authenticate again/);
    expect(await subjects.run('alice', 'subject-latest', { exp: exp(3_600_000), iss: ISSUER }, () => outsideAnyRequest(() => alice.token()))).toMatch(/^exchanged-subject-latest-/);
    // Another principal's request context does not lend its token to alice's connection.
    const fromBob = await subjects.run('bob', 'subject-bob', { exp: exp(3_600_000), iss: ISSUER }, () => alice.token());
    expect(fromBob).toMatch(/^exchanged-subject-latest-/);
    expect(requests.map((f) => f.get('subject_token'))).toEqual(['subject-latest']);
  });

  it("of another issuer never reaches the token endpoint: the call fails naming the issuer to authenticate with", async () => {
    const { subjects, exchange } = setup();
    const call = subjects.run('alice', 'subject-of-idp-b', { exp: exp(3_600_000), iss: 'https://idp-b.example.com' }, () => exchange.forPrincipal('alice').token());
    await expect(call).rejects.toThrow('upstream "crm": exchanges only access tokens of issuer https://idp-a.example.com, and this caller\'s token is of another: authenticate with issuer https://idp-a.example.com to use this server');
    remember(subjects, 'bob', 'subject-without-iss', { exp: exp(3_600_000) });
    await expect(exchange.forPrincipal('bob').token()).rejects.toThrow(/authenticate with issuer/);
    expect(requests).toHaveLength(0);
  });
});

describe('exchange bookkeeping', () => {
  it("is not renewed ahead when its expiry is its subject's (no renewal could outlive it)", async () => {
    const { subjects, exchange, started } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(40_000), iss: ISSUER });
    const alice = exchange.forPrincipal('alice');
    const first = await alice.token();
    clock += 35_000; // inside what would be its last quarter
    expect(await alice.token()).toBe(first);
    // A renewal would have been started (its request sent) by the call that found it due.
    expect(started).toEqual(['subject-alice']);
    expect(requests).toHaveLength(1);
  });

  it('remembers a refused exchange for a few seconds per subject: one round trip to the IdP, not one per request', async () => {
    const { subjects, exchange } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    endpoint.answer = () => ({ status: 400, body: { error: 'invalid_grant' } });
    const alice = exchange.forPrincipal('alice');
    for (let i = 0; i < 5; i++) await expect(alice.token()).rejects.toThrow(/invalid_grant/);
    expect(requests).toHaveLength(1);
    // Another subject of the same principal is not refused on the first one's account.
    await expect(subjects.run('alice', 'subject-other', { exp: exp(3_600_000), iss: ISSUER }, () => alice.token())).rejects.toThrow(/invalid_grant/);
    expect(requests).toHaveLength(2);
    clock += FAILURE_MEMORY_MS;
    endpoint.answer = exchanged;
    expect(await subjects.run('alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER }, () => alice.token())).toMatch(/^exchanged-subject-alice-/);
    expect(requests).toHaveLength(3);
  });

  it('is forgotten, with the refusals it remembers, when cleared', async () => {
    const { subjects, exchange } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    await exchange.forPrincipal('alice').token();
    expect(exchange.size).toBe(1);
    exchange.clear();
    expect(exchange.size).toBe(0);
    await exchange.forPrincipal('alice').token();
    expect(requests).toHaveLength(2);
  });
});

describe('the token endpoint answer', () => {
  const refusals: Array<[string, Record<string, unknown>, RegExp]> = [
    ['no token_type', { access_token: 'abc', expires_in: 60 }, /token type other than Bearer/],
    ['token_type N_A (RFC 8693: not an access token)', { access_token: 'abc', token_type: 'N_A', expires_in: 60 }, /token type other than Bearer/],
    ['an issued_token_type that is no access token', { access_token: 'abc', token_type: 'bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:id_token' }, /issued_token_type/],
    ['expires_in 0', { access_token: 'abc', token_type: 'Bearer', expires_in: 0 }, /already expired/],
    ['a negative expires_in', { access_token: 'abc', token_type: 'Bearer', expires_in: '-5' }, /already expired/],
    ['a token outside the RFC 6750 b64token characters', { access_token: 'abc,def', token_type: 'Bearer' }, /no usable access_token/],
    ['a token with = inside', { access_token: 'ab=cd', token_type: 'Bearer' }, /no usable access_token/],
  ];
  it.each(refusals)('is refused with %s', async (_what, body, why) => {
    const { subjects, exchange } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    endpoint.answer = () => ({ status: 200, body });
    await expect(exchange.forPrincipal('alice').token()).rejects.toThrow(why);
  });

  it('is accepted with a lower-case bearer, a jwt issued_token_type and a b64token with padding', async () => {
    const { subjects, exchange } = setup();
    remember(subjects, 'alice', 'subject-alice', { exp: exp(3_600_000), iss: ISSUER });
    endpoint.answer = () => ({ status: 200, body: { access_token: 'a-b.c_d~e+f/g==', token_type: 'bearer', issued_token_type: 'urn:ietf:params:oauth:token-type:jwt', expires_in: 60 } });
    expect(await exchange.forPrincipal('alice').token()).toBe('a-b.c_d~e+f/g==');
  });
});

describe('SubjectTokens', () => {
  it('keeps the latest token per principal until its exp, bounded in count and bytes', () => {
    const store = new SubjectTokens({ now, maxPrincipals: 3, maxBytes: 64 });
    remember(store, 'a', 'token-a1', { exp: exp(10_000), iss: ISSUER });
    remember(store, 'a', 'token-a2', { exp: exp(10_000), iss: ISSUER });
    expect(store.current('a')?.token).toBe('token-a2');
    remember(store, 'b', 'token-b', { exp: exp(10_000), iss: ISSUER });
    remember(store, 'c', 'token-c', { exp: exp(10_000), iss: ISSUER });
    remember(store, 'd', 'token-d', { exp: exp(10_000), iss: ISSUER });
    expect(store.size).toBe(3);
    expect(store.current('a')).toBeUndefined(); // least recently authenticated: out first
    remember(store, 'e', 'x'.repeat(60), { exp: exp(10_000), iss: ISSUER }); // takes nearly every byte
    expect(store.size).toBeLessThanOrEqual(2);
    clock += 10_000;
    expect(store.current('e')).toBeUndefined();
    remember(store, 'f', 'expired', { exp: exp(-1), iss: ISSUER });
    expect(store.current('f')).toBeUndefined();
  });

  it('holds no entry past its exp, without being asked for it', async () => {
    // The real clock: the store drops the entry itself (its text leaves memory), nobody reads it.
    const store = new SubjectTokens();
    remember(store, 'a', 'token-short', { exp: (Date.now() + 200) / 1000 });
    remember(store, 'b', 'token-long', { exp: Date.now() / 1000 + 3_600 });
    expect(store.size).toBe(2);
    await waitUntil(() => store.size === 1, 'the short-lived entry lapsed', 5_000);
    expect(store.current('b')?.token).toBe('token-long');
  });
});
