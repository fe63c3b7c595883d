/**
 * The gateway's own OAuth client for an upstream (`upstreamAuth.kind: "clientCredentials"`),
 * against a real authorization server (`oidc-provider` on loopback) and an HTTP upstream that
 * accepts only that server's tokens for its own URL: every request carries the gateway's token
 * (audience: the upstream), the client's own token never reaches the upstream, one token serves
 * many calls, a token the upstream refuses is replaced, and the client secret appears in no error.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { RunningGateway } from '../../src/gateway.js';
import { MACHINE_CLIENT, MACHINE_SECRET, startTestIdp, type TestIdp } from '../inbound/auth/oauth/test-idp.js';
import { startHeaderTap, type HeaderTap } from '../security/header-tap.js';
import { assertBuilt, bearerPrincipals, Cleanup, connectClient, ERAS, startGatewayFor, startUpstreams, textOf, type Upstreams } from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const principals = bearerPrincipals('alice');
let idp: TestIdp;
let upstreams: Upstreams;
let guarded: HeaderTap;
let gateway: RunningGateway;
/** Tokens the upstream accepted, and ones it was told to refuse from now on. */
const accepted: string[] = [];
const revoked = new Set<string>();

beforeAll(async () => {
  assertBuilt();
  idp = await startTestIdp();
  perFile.add(() => idp.close());
  upstreams = await startUpstreams(perFile);
  const keys = createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));
  let audience = '';
  guarded = await startHeaderTap(upstreams.httpFixture.match, async (headers) => {
    const authorization = headers.find(([name]) => name === 'authorization')?.[1];
    const token = authorization?.startsWith('Bearer ') === true ? authorization.slice(7) : undefined;
    if (token === undefined || revoked.has(token)) return 401;
    try {
      await jwtVerify(token, keys, { issuer: idp.issuer, audience });
    } catch {
      return 401;
    }
    accepted.push(token);
    return undefined;
  });
  audience = guarded.url;
  perFile.add(() => guarded.close());
  gateway = await startGatewayFor(
    perFile,
    { ...principals, env: { ...principals.env, IT_UPSTREAM_CLIENT_SECRET: MACHINE_SECRET } },
    {
      guarded: {
        transport: 'streamableHttp',
        url: guarded.url,
        allowPrivateNetwork: true,
        upstreamAuth: { kind: 'clientCredentials', tokenUrl: `${idp.issuer}/token`, clientId: MACHINE_CLIENT, clientSecretEnv: 'IT_UPSTREAM_CLIENT_SECRET', scope: 'mcp:tools', allowPrivateNetwork: true },
      },
    },
  );
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

describe.each(ERAS)('clientCredentials upstream auth, %s era', (era) => {
  it("calls with the gateway's own token for the upstream, never the client's", async () => {
    const before = accepted.length;
    const { client } = await connectClient(perTest, gateway.url, era, { headers: principals.headers('alice') });
    expect(textOf(await client.callTool({ name: 'guarded__echo', arguments: { text: 'authorized' } }))).toBe('authorized');
    expect(textOf(await client.callTool({ name: 'guarded__echo', arguments: { text: 'again' } }))).toBe('again');
    expect(accepted.length).toBeGreaterThan(before);
    // One token serves many requests.
    expect(new Set(accepted).size).toBeLessThanOrEqual(2);
    const clientToken = principals.headers('alice').Authorization!.slice('Bearer '.length);
    for (const request of guarded.requests) {
      for (const [, value] of request.headers) expect(value).not.toContain(clientToken);
    }
  });
});

describe('a token the upstream refuses', () => {
  it('is replaced: the call that met the refusal fails, the next one gets a new token', async () => {
    const { client } = await connectClient(perTest, gateway.url, '2026', { headers: principals.headers('alice') });
    expect(textOf(await client.callTool({ name: 'guarded__echo', arguments: { text: 'before' } }))).toBe('before');
    const old = accepted.at(-1)!;
    revoked.add(old);
    await client.callTool({ name: 'guarded__echo', arguments: { text: 'refused' } }).catch(() => undefined);
    const result = await client.callTool({ name: 'guarded__echo', arguments: { text: 'after' } });
    expect(textOf(result)).toBe('after');
    expect(accepted.at(-1)).not.toBe(old);
  });
});

describe('configuration', () => {
  it('refuses upstreamAuth beside an Authorization header, and a client secret the policy may not read', () => {
    const base = { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp', upstreamAuth: { kind: 'clientCredentials', tokenUrl: 'https://idp.example.com/token', clientId: 'c', clientSecretEnv: 'AWS_SECRET_ACCESS_KEY' } };
    expect(() => parseConfig({ servers: { a: { ...base, headers: { Authorization: 'Bearer x' } } } })).toThrow(/servers\.a\.upstreamAuth: cannot be combined with an Authorization header/);
    expect(() => parseConfig({ servers: { a: base } })).toThrow(/servers\.a\.upstreamAuth\.clientSecretEnv: the policy does not allow reading this variable/);
    expect(() => parseConfig({ servers: { a: { ...base, upstreamAuth: { ...base.upstreamAuth, clientSecretEnv: 'OK_SECRET', tokenUrl: 'http://idp.example.com/token' } } } })).toThrow(/servers\.a\.upstreamAuth\.tokenUrl/);
  });
});
