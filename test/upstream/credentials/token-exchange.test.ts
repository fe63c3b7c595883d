/**
 * The token exchange's bookkeeping against a real token endpoint on 127.0.0.1 that records each
 * RFC 8693 request and answers one token per request: which principal's subject each exchange
 * carried, when it is reused or exchanged again (a clock the test moves), one exchange however
 * many wait, the refusals that need no request at all; and the subject-token store's bounds.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SubjectTokens } from '../../../src/upstream/credentials/subject-tokens.js';
import { ACCESS_TOKEN_TYPE, TOKEN_EXCHANGE_GRANT, tokenExchange, type TokenExchangeOptions } from '../../../src/upstream/credentials/token-exchange.js';

const SECRET = 'exchange-client-secret';
let server: Server;
let tokenUrl = '';
/** Each request's form, in arrival order. */
const requests: URLSearchParams[] = [];
type Answer = (form: URLSearchParams, n: number) => { status: number; body: Record<string, unknown> };
const exchanged: Answer = (form, n) => ({
  status: 200,
  body: { access_token: `exchanged-${form.get('subject_token')}-${n}`, token_type: 'Bearer', expires_in: 600, issued_token_type: ACCESS_TOKEN_TYPE },
});
let answer: Answer = exchanged;
/** Requests are answered only once released (one exchange however many wait). */
let hold: Promise<void> = Promise.resolve();

async function read(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    void read(req).then(async (text) => {
      const form = new URLSearchParams(text);
      requests.push(form);
      const n = requests.length;
      await hold;
      const basic = Buffer.from(`client:${SECRET}`).toString('base64');
      const { status, body } = req.headers.authorization === `Basic ${basic}` ? answer(form, n) : { status: 401, body: { error: 'invalid_client' } };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let clock = 1_000_000;
const now = () => clock;
const exp = (msFromNow: number) => (clock + msFromNow) / 1000;

function setup(overrides: Partial<TokenExchangeOptions> = {}) {
  const subjects = new SubjectTokens({ now });
  const exchange = tokenExchange({
    server: 'crm',
    upstreamUrl: 'https://crm.example.com/mcp',
    config: { tokenUrl, clientId: 'client', clientSecretEnv: 'SECRET_VAR', scope: 'crm:read' },
    subjects,
    readEnv: (name) => (name === 'SECRET_VAR' ? SECRET : undefined),
    fetch: (url, init) => fetch(url, init),
    now,
    ...overrides,
  });
  return { subjects, exchange };
}

beforeEach(() => {
  requests.length = 0;
  clock = 1_000_000;
  hold = Promise.resolve();
  answer = exchanged;
});

describe('tokenExchange', () => {
  it('exchanges each principal\'s own subject token, and a connection only ever gets its principal\'s', async () => {
    const { subjects, exchange } = setup();
    subjects.remember('alice', 'subject-alice', exp(3_600_000));
    subjects.remember('bob', 'subject-bob', exp(3_600_000));
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
    const { subjects, exchange } = setup();
    subjects.remember('alice', 'subject-alice', exp(3_600_000));
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const waiting = Array.from({ length: 10 }, () => exchange.forPrincipal('alice').token());
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    expect(new Set(await Promise.all(waiting)).size).toBe(1);
    expect(requests).toHaveLength(1);
  });

  it('exchanges again for a new subject token, and never uses one past its subject\'s exp', async () => {
    const { subjects, exchange } = setup();
    const alice = exchange.forPrincipal('alice');
    subjects.remember('alice', 'subject-old', exp(60_000));
    const first = await alice.token();
    subjects.remember('alice', 'subject-new', exp(3_600_000));
    const second = await alice.token();
    expect(second).toMatch(/^exchanged-subject-new-/);
    expect(second).not.toBe(first);
    // The new subject's exchange is capped by nothing shorter: reused well past the old one's exp.
    clock += 120_000;
    expect(await alice.token()).toBe(second);
    expect(requests).toHaveLength(2);
  });

  it('renews ahead of expiry in the background, and a dropped token once per cooldown', async () => {
    const { subjects, exchange } = setup();
    subjects.remember('alice', 'subject-alice', exp(3_600_000));
    const alice = exchange.forPrincipal('alice');
    const first = await alice.token();
    clock += 600_000 - 30_000; // inside the last minute of its life: still served, renewed meanwhile
    expect(await alice.token()).toBe(first);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const renewed = await alice.token();
    expect(renewed).not.toBe(first);
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
    subjects.remember('alice', 'subject-alice', exp(1_000));
    clock += 1_000;
    await expect(exchange.forPrincipal('alice').token()).rejects.toThrow(/no live access token/);
    await expect(exchange.forPrincipal(undefined).token()).rejects.toThrow(/upstream "crm": is reached only on a principal's own connection/);
    expect(requests).toHaveLength(0);
  });

  it('names the server and the OAuth error code of a refused exchange, never a token or the secret', async () => {
    const { subjects, exchange } = setup();
    subjects.remember('alice', 'subject-alice', exp(3_600_000));
    answer = () => ({ status: 400, body: { error: 'invalid_grant', error_description: 'subject-alice is revoked' } });
    const error = await exchange.forPrincipal('alice').token().then(() => new Error('no refusal'), (e: unknown) => e as Error);
    expect(error.message).toBe('upstream "crm": could not get an access token for the upstream: the token endpoint answered HTTP 400 (invalid_grant)');
    const missing = setup({ readEnv: () => undefined });
    missing.subjects.remember('alice', 'subject-alice', exp(3_600_000));
    await expect(missing.exchange.forPrincipal('alice').token()).rejects.toThrow(/SECRET_VAR is not set/);
  });
});

describe('SubjectTokens', () => {
  it('keeps the latest token per principal until its exp, bounded in count and bytes', () => {
    const store = new SubjectTokens({ now, maxPrincipals: 3, maxBytes: 64 });
    store.remember('a', 'token-a1', exp(10_000));
    store.remember('a', 'token-a2', exp(10_000));
    expect(store.current('a')?.token).toBe('token-a2');
    store.remember('b', 'token-b', exp(10_000));
    store.remember('c', 'token-c', exp(10_000));
    store.remember('d', 'token-d', exp(10_000));
    expect(store.size).toBe(3);
    expect(store.current('a')).toBeUndefined(); // least recently authenticated: out first
    store.remember('e', 'x'.repeat(60), exp(10_000)); // takes nearly every byte
    expect(store.size).toBeLessThanOrEqual(2);
    clock += 10_000;
    expect(store.current('e')).toBeUndefined();
    store.remember('f', 'expired', exp(-1));
    expect(store.current('f')).toBeUndefined();
  });
});
