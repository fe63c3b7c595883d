/**
 * Replicas with authentication on: two gateway processes sharing Redis, each authenticating the
 * client with bearer tokens, JWTs or OAuth access tokens (from a real `oidc-provider` on
 * loopback). A session opened on A is served when its next request reaches B: B authenticates the
 * client, forwards to A with a principal proof (cluster/principal-proof.ts), and A serves it as
 * that principal. Another principal presenting the session id gets 404 on either replica; a
 * request claiming to be forwarded without a valid proof is refused; a cluster with auth but no
 * cluster secret does not start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../integration/harness/cli.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { killPids, processesWithMarker } from '../integration/harness/processes.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup, within } from '../integration/harness/wait.js';
import { mintProof } from '../../src/cluster/principal-proof.js';
import { startTestIdp, type TestIdp } from '../inbound/auth/oauth/test-idp.js';
import { assertSharedRedis, deleteKeysUnder, freePort, SHARED_REDIS_URL, uniquePrefix, withRedis } from '../session/redis-helpers.js';

// Both replicas announce the load balancer's URL (listen.publicUrl); each listens on its own port.
const READY = /^\[portcullis\]:Ready\. (http:\/\/127\.0\.0\.1:9\/mcp)$/;
const PUBLIC_URL = 'http://127.0.0.1:9';
const SECRET = `cluster-secret-${randomUUID()}`;
const cleanup = new Cleanup();
const perFile = new Cleanup();
let dir: string;
let idp: TestIdp;
let jwtKey: CryptoKey;

interface AuthKind {
  kind: 'bearer' | 'jwt' | 'oauth';
  auth(): Record<string, unknown>;
  env: Record<string, string>;
  /** The Authorization header of `principal`. */
  header(principal: 'alice' | 'bob'): Promise<string>;
}

const BEARER_TOKENS = { alice: `alice-${randomUUID()}`, bob: `bob-${randomUUID()}` };

const KINDS: AuthKind[] = [
  {
    kind: 'bearer',
    auth: () => ({ kind: 'bearer', tokens: [{ principal: 'alice', env: 'RA_ALICE' }, { principal: 'bob', env: 'RA_BOB' }] }),
    env: { RA_ALICE: BEARER_TOKENS.alice, RA_BOB: BEARER_TOKENS.bob },
    header: async (p) => `Bearer ${BEARER_TOKENS[p]}`,
  },
  {
    kind: 'jwt',
    auth: () => ({ kind: 'jwt', jwks: { file: join(dir, 'jwks.json') }, issuer: 'https://idp.test', audience: 'replicas', algorithms: ['ES256'] }),
    env: {},
    header: async (p) =>
      `Bearer ${await new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer('https://idp.test').setAudience('replicas').setSubject(p).setExpirationTime('10m').sign(jwtKey)}`,
  },
  {
    kind: 'oauth',
    auth: () => ({ kind: 'oauth', issuers: [{ issuer: idp.issuer, allowPrivateNetwork: true }], scopes: ['mcp:tools'], principalClaim: 'sub' }),
    env: {},
    // Client-credentials tokens name the client as `sub`; both users' tokens are the machine client's here.
    header: async () => `Bearer ${await idp.clientCredentialsToken(`${PUBLIC_URL}/mcp`, 'mcp:tools')}`,
  },
];

beforeAll(async () => {
  assertBuilt();
  await assertSharedRedis();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-replicas-auth-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  jwtKey = privateKey;
  writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }));
  idp = await startTestIdp();
  perFile.add(() => idp.close());
});
afterEach(() => cleanup.run());
afterAll(() => perFile.run());

async function replica(kind: AuthKind, prefix: string, replicaId: string, env: Record<string, string> = { PORTCULLIS_CLUSTER_SECRET: SECRET }, extra: Record<string, unknown> = {}) {
  const marker = newMarker();
  const port = await freePort();
  const path = join(dir, `config-${kind.kind}-${replicaId}-${randomUUID()}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      listen: { publicUrl: PUBLIC_URL, port },
      servers: { fx: stdioServer(marker) },
      auth: kind.auth(),
      eventStore: { kind: 'redis', url: SHARED_REDIS_URL, keyPrefix: prefix, allowPrivateNetwork: true },
      cluster: { replicaId, leaseMs: 1_500, allowPrivateNetwork: true },
      ...extra,
    }),
  );
  const cli = spawnCli(cleanup, ['--config', path], { ...kind.env, ...env });
  cleanup.add(() => killPids(processesWithMarker(marker)));
  cleanup.add(async () => {
    if (cli.child.exitCode !== null || cli.child.signalCode !== null) return;
    cli.child.kill('SIGTERM');
    await cli.exited(15_000).catch(() => undefined);
  });
  await cli.waitForLine(READY, 30_000);
  return { cli, url: `http://127.0.0.1:${port}/mcp` };
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

async function openSession(url: string, authorization: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...JSON_HEADERS, authorization },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'ra', version: '1' } } }),
  });
  expect(response.status).toBe(200);
  await response.text();
  const sessionId = response.headers.get('mcp-session-id')!;
  const initialized = await fetch(url, {
    method: 'POST',
    headers: { ...JSON_HEADERS, authorization, 'mcp-session-id': sessionId },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  expect(initialized.status).toBe(202);
  return sessionId;
}

async function echo(url: string, sessionId: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'mcp-session-id': sessionId, ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'across replicas' } } }),
  });
  return { status: response.status, text: await within(response.text(), 15_000, 'the answer') };
}

describe.each(KINDS)('two replicas with $kind authentication', (kind) => {
  it('serves on B a session A owns, as the principal that opened it, and nobody else', async () => {
    const prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const [a, b] = await Promise.all([replica(kind, prefix, 'A'), replica(kind, prefix, 'B')]);
    const alice = await kind.header('alice');
    const sessionId = await openSession(a.url, alice);

    const viaB = await echo(b.url, sessionId, { authorization: alice });
    expect(viaB.status).toBe(200);
    expect(viaB.text).toContain('across replicas');
    expect(await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${sessionId}`))).toBe('A');

    // Without credentials: 401 on B before anything is forwarded.
    expect((await echo(b.url, sessionId, {})).status).toBe(401);
    if (kind.kind !== 'oauth') {
      // Another principal presenting the id learns nothing, on either replica.
      const bob = await kind.header('bob');
      expect((await echo(b.url, sessionId, { authorization: bob })).status).toBe(404);
      expect((await echo(a.url, sessionId, { authorization: bob })).status).toBe(404);
    }

    // Posing as a replica: the hop header and even the secret, but no valid principal proof.
    // The secret itself (which no forward carries any more) proves nothing either.
    const forgedHeaders = { 'x-portcullis-forwarded-by': 'B', 'x-portcullis-cluster-secret': SECRET };
    expect((await echo(a.url, sessionId, forgedHeaders)).status).toBe(403);
    const otherKey = mintProof('not-the-cluster-secret', 'alice', { sessionId, method: 'POST', path: '/mcp' });
    expect((await echo(a.url, sessionId, { ...forgedHeaders, 'x-portcullis-principal-proof': otherKey })).status).toBe(403);
    const otherSession = mintProof(SECRET, 'alice', { sessionId: randomUUID(), method: 'POST', path: '/mcp' });
    expect((await echo(a.url, sessionId, { ...forgedHeaders, 'x-portcullis-principal-proof': otherSession })).status).toBe(403);
  }, 90_000);
});

describe('two replicas with access rules', () => {
  it("judge a request B forwards to A by the claims of that request's own token, which A never sees", async () => {
    const prefix = uniquePrefix();
    cleanup.add(() => deleteKeysUnder(SHARED_REDIS_URL, prefix));
    const policy = join(dir, `policy-${randomUUID()}.json`);
    writeFileSync(policy, JSON.stringify({ access: { default: 'allow', rules: [{ name: 'sales-no-echo', claims: { groups: ['sales'] }, effect: 'deny', tools: ['fx__echo'] }] } }));
    const jwt = KINDS.find((k) => k.kind === 'jwt')!;
    const [a, b] = await Promise.all([replica(jwt, prefix, 'A', undefined, { policy }), replica(jwt, prefix, 'B', undefined, { policy })]);
    const token = async (groups: string[]) =>
      `Bearer ${await new SignJWT({ groups }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer('https://idp.test').setAudience('replicas').setSubject('alice').setExpirationTime('10m').sign(jwtKey)}`;
    const eng = await token(['eng']);
    const sales = await token(['sales']);
    const sessionId = await openSession(a.url, eng);

    // Through B, forwarded to A: the sales token's profile travels in the proof and refuses the call.
    const refused = await echo(b.url, sessionId, { authorization: sales });
    expect(refused.text).toContain('-32602');
    expect(refused.text).not.toContain('across replicas');
    expect(await withRedis(SHARED_REDIS_URL, (client) => client.get(`${prefix}owner:${sessionId}`))).toBe('A');
    const allowed = await echo(b.url, sessionId, { authorization: eng });
    expect(allowed.text).toContain('across replicas');

    // A valid proof that names no access profile (a replica without these rules) is refused, not
    // judged by the principal's name alone.
    const unprofiled = mintProof(SECRET, 'alice', { sessionId, method: 'POST', path: '/mcp' });
    const hop = { 'x-portcullis-forwarded-by': 'B', 'x-portcullis-principal-proof': unprofiled };
    const answer = await echo(a.url, sessionId, hop);
    expect(answer.status).toBe(403);
    expect(answer.text).toContain('FORWARD_REFUSED');
  }, 90_000);
});

describe('a cluster with auth', () => {
  it('refuses to start without the cluster secret, naming the variable', async () => {
    const path = join(dir, 'no-secret.json');
    writeFileSync(
      path,
      JSON.stringify({
        servers: {},
        auth: KINDS[0]!.auth(),
        eventStore: { kind: 'redis', url: SHARED_REDIS_URL, keyPrefix: uniquePrefix(), allowPrivateNetwork: true },
        cluster: { replicaId: 'A', allowPrivateNetwork: true },
      }),
    );
    const cli = spawnCli(cleanup, ['--config', path, '--port', '0'], KINDS[0]!.env);
    await cli.exited(30_000);
    expect(cli.child.exitCode).not.toBe(0);
    expect(cli.stderr()).toContain('PORTCULLIS_CLUSTER_SECRET must be set');
    expect(cli.stderr()).not.toContain(BEARER_TOKENS.alice);
  }, 60_000);
});
