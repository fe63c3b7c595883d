/**
 * Which subject token the upstream fetch of a `tokenExchange` server exchanges, over a real
 * upstream and a real token endpoint on 127.0.0.1: a call's POST is exchanged for the token of
 * the request that carries it, even when another token of the same principal authenticated
 * since; a GET (the connection's own stream, opened and reconnected by the SDK inside whatever
 * request was under way) for the principal's latest, so it outlives the request that opened it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import type { RemoteServerConfig } from '../../../src/config/schema.js';
import { createEgressDispatcher } from '../../../src/net/egress-guard.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { SubjectTokens } from '../../../src/upstream/credentials/subject-tokens.js';
import { upstreamCredentials } from '../../../src/upstream/credentials/upstream-credentials.js';
import { createUpstreamFetch } from '../../../src/upstream/streamable-http.js';
import { SECRET, startTokenEndpoint, type TokenEndpoint } from './token-endpoint-fixture.js';

const ISSUER = 'https://idp.example.com';
let endpoint: TokenEndpoint;
let upstream: http.Server;
let upstreamUrl = '';
/** Each upstream request: its method and the bearer it carried. */
const seen: Array<{ method: string; bearer: string }> = [];

beforeAll(async () => {
  endpoint = await startTokenEndpoint();
  upstream = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', bearer: (req.headers.authorization ?? '').replace(/^Bearer /, '') });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  await endpoint.close();
});

describe("a tokenExchange server's upstream fetch", () => {
  it("exchanges a call's own token, and the principal's latest for the connection's own GET stream", async () => {
    const subjects = new SubjectTokens();
    const credentials = upstreamCredentials((name) => (name === 'CRM_CLIENT_SECRET' ? SECRET : undefined), silentLogger(), { subjectTokens: subjects, subjectIssuer: ISSUER });
    const auth = { kind: 'jwt', jwks: { url: `${ISSUER}/jwks` }, issuer: ISSUER, audience: 'https://gw.example.com/mcp' };
    const upstreamAuth = { kind: 'tokenExchange', tokenUrl: endpoint.url, clientId: 'client', clientSecretEnv: 'CRM_CLIENT_SECRET', allowPrivateNetwork: true };
    const config = parseConfig({ auth, servers: { crm: { transport: 'streamableHttp', url: upstreamUrl, isolation: 'principal', allowPrivateNetwork: true, upstreamAuth } } }).servers.crm as RemoteServerConfig;
    const fetch = createUpstreamFetch(
      'crm',
      config,
      {
        readEnv: () => undefined,
        dispatcherFor: (server, entry) => createEgressDispatcher({ server, allowPrivateNetwork: entry.allowPrivateNetwork, connectTimeoutMs: entry.connectTimeoutMs }),
        tokenSourceFor: (name, entry, owner) => credentials.tokenSourceFor(name, entry, owner),
        credentialOwner: { kind: 'principal', principal: 'alice' },
      },
      silentLogger(),
    );
    const claims = { exp: Date.now() / 1000 + 3_600, iss: ISSUER };
    let releaseBroad!: () => void;
    const broadHeld = new Promise<void>((resolve) => (releaseBroad = resolve));
    // The broad token's request is under way when the narrow one authenticates (now the latest).
    const broadRequest = subjects.run('alice', 'subject-broad', claims, async () => {
      await broadHeld;
      await (await fetch(upstreamUrl, { method: 'POST', body: '{}' })).text();
      await (await fetch(upstreamUrl, { method: 'GET' })).text();
    });
    await subjects.run('alice', 'subject-narrow', claims, async () => (await fetch(upstreamUrl, { method: 'POST', body: '{}' })).text());
    releaseBroad();
    await broadRequest;
    expect(seen.map(({ method, bearer }) => `${method} ${bearer.replace(/-\d+$/, '')}`)).toEqual([
      'POST exchanged-subject-narrow',
      'POST exchanged-subject-broad',
      'GET exchanged-subject-narrow',
    ]);
    await credentials.close();
  });
});
