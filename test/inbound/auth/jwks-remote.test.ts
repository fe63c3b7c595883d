import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { authConfigSchema } from '../../../src/config/auth-schema.js';
import { compileAuthenticator, type Authenticator, type AuthDeps } from '../../../src/inbound/auth/authenticate.js';
import { installTripwire, type Tripwire } from '../../net/tripwire.js';
import { captureLog, leaks, type CapturedLog } from './capture-log.js';

const ISSUER = 'https://idp.example.test/';
const AUDIENCE = 'portcullis';

/** A JWKS endpoint on 127.0.0.1 that counts every TCP connection and request it receives. */
interface KeyServer {
  server: Server;
  port: number;
  connections: number;
  requests: number;
  status: number;
  /** Whether the last huge answer was written to its end (undefined until its connection closed). */
  hugeFinished?: boolean;
}

let privateKey: CryptoKey;
let jwk: JWK;
let keys: KeyServer;
let wire: Tripwire;
const open: Authenticator[] = [];

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const server = createServer((req, res) => {
    keys.requests += 1;
    if (req.url === '/huge.json') {
      // A valid key set padded to 20 MiB, streamed: only a reader with no bound takes it all.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.on('close', () => (keys.hugeFinished = res.writableFinished));
      const pad = 'x'.repeat(64 * 1024);
      res.write(`{"keys":[${JSON.stringify(jwk)}],"pad":"`);
      let left = 320;
      const pump = (): void => {
        while (left > 0 && !res.destroyed) {
          left -= 1;
          if (!res.write(pad)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end('"}');
      };
      pump();
      return;
    }
    if (req.url !== '/jwks.json' || keys.status !== 200) {
      res.writeHead(keys.status === 200 ? 404 : keys.status).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  server.on('connection', () => (keys.connections += 1));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  keys = { server, port: (server.address() as AddressInfo).port, connections: 0, requests: 0, status: 200 };
});

afterAll(async () => {
  keys.server.closeAllConnections();
  await new Promise<void>((resolve) => keys.server.close(() => resolve()));
});

beforeEach(() => {
  keys.connections = 0;
  keys.requests = 0;
  keys.status = 200;
  wire = installTripwire();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((a) => a.close()));
  wire.restore();
  expect(wire.violations).toEqual([]);
});

function token(): Promise<string> {
  return new SignJWT({ sub: 'svc-1' })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime('5m')
    .sign(privateKey);
}

function remote(url: string, allowPrivateNetwork: boolean, extra: Partial<AuthDeps> = {}): { authenticator: Authenticator; log: CapturedLog } {
  const log = captureLog();
  const config = authConfigSchema.parse({ kind: 'jwt', jwks: { url, allowPrivateNetwork }, issuer: ISSUER, audience: AUDIENCE });
  const authenticator = compileAuthenticator(config, { readEnv: () => undefined, logger: log.logger, ...extra });
  open.push(authenticator);
  return { authenticator, log };
}

const url = (scheme: string, path = '/jwks.json'): string => `${scheme}://127.0.0.1:${keys.port}${path}`;

function parsed(log: CapturedLog): Record<string, unknown>[] {
  return log.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('JWT authentication with a remote JWKS through the egress guard', () => {
  it('fetches the key set from a loopback server when allowPrivateNetwork is true, once', async () => {
    const { authenticator } = remote(url('http'), true);
    expect(keys.requests).toBe(0); // nothing is fetched at boot
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: true, principal: 'svc-1', claims: expect.objectContaining({ sub: expect.any(String) }) });
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: true, principal: 'svc-1', claims: expect.objectContaining({ sub: expect.any(String) }) });
    expect(keys.requests).toBe(1);
  });

  it('never connects to a loopback https key set when allowPrivateNetwork is false', async () => {
    const { authenticator, log } = remote(url('https'), false);
    const jwt = await token();
    const result = await authenticator.authenticate([`Bearer ${jwt}`]);
    expect(result).toMatchObject({ ok: false, status: 401, code: 'AUTH_INVALID' });
    expect(keys.connections).toBe(0);
    const lines = parsed(log);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, code: 'UPSTREAM_BLOCKED', range: 'loopback' }));
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, reason: 'key set fetch failed (UPSTREAM_BLOCKED)' }));
    expect(log.lines.join('\n')).not.toContain(String(keys.port));
    expect(leaks(log.lines, [jwt, ...jwt.split('.').filter((p) => p.length >= 8)])).toBeUndefined();
  });

  it('never connects to a loopback plain-http key set when allowPrivateNetwork is false', async () => {
    const { authenticator, log } = remote(url('http'), false);
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: false, status: 401, code: 'AUTH_INVALID' });
    expect(keys.connections).toBe(0);
    expect(parsed(log)).toContainEqual(expect.objectContaining({ level: 40, code: 'UPSTREAM_BLOCKED', range: 'loopback' }));
  });

  it('never sends a plain-http key set request to a public address, even with allowPrivateNetwork', async () => {
    // The guard decides on the literal before any socket exists; the tripwire proves no packet left.
    const { authenticator, log } = remote('http://8.8.8.8/jwks.json', true);
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: false, status: 401, code: 'AUTH_INVALID' });
    expect(parsed(log)).toContainEqual(expect.objectContaining({ level: 40, code: 'UPSTREAM_BLOCKED', range: 'public' }));
    expect(log.lines.join('\n')).not.toContain('8.8.8.8');
  });

  const bootRefusals: readonly (readonly [string, string, boolean, RegExp])[] = [
    ['plain http to a non-loopback host', 'http://idp.example.test/jwks.json', false, /non-loopback host/],
    ['credentials in the URL', 'https://user:s3cretPassw0rd@idp.example.test/jwks.json', true, /must not contain credentials/],
    ['another scheme', 'file:///etc/jwks.json', true, /must use https:/],
    ['a relative URL', '/jwks.json', true, /not a valid absolute URL/],
  ];

  it.each(bootRefusals)('refuses at boot %s, without echoing the URL', (_name, jwksUrl, allowPrivateNetwork, pattern) => {
    let message = '';
    try {
      remote(jwksUrl, allowPrivateNetwork);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(pattern);
    expect(message).not.toContain('idp.example.test');
    expect(message).not.toContain('s3cretPassw0rd');
  });

  it('answers 401 and warns when the key set endpoint fails', async () => {
    keys.status = 500;
    const { authenticator, log } = remote(url('http'), true);
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: false, code: 'AUTH_INVALID' });
    expect(keys.requests).toBe(1);
    expect(parsed(log)).toContainEqual(expect.objectContaining({ level: 40, reason: 'key set unavailable' }));
  });

  it('refuses a key set answer over 256 KiB without reading it all, and answers 401', async () => {
    const { authenticator, log } = remote(url('http', '/huge.json'), true);
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: false, status: 401, code: 'AUTH_INVALID' });
    expect(parsed(log)).toContainEqual(expect.objectContaining({ level: 40, reason: 'key set fetch failed (UPSTREAM_MESSAGE_TOO_LARGE)' }));
    // The gateway reset the connection instead of reading 20 MiB.
    await expect.poll(() => keys.hugeFinished).toBe(false);
  });

  it('uses an injected fetch instead of the network when one is given', async () => {
    const fetched: string[] = [];
    const { authenticator } = remote('https://idp.example.test/jwks.json', false, {
      fetchJwks: async (u) => {
        fetched.push(u);
        return new Response(JSON.stringify({ keys: [jwk] }), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    expect(await authenticator.authenticate([`Bearer ${await token()}`])).toMatchObject({ ok: true, principal: 'svc-1', claims: expect.objectContaining({ sub: expect.any(String) }) });
    expect(fetched).toEqual(['https://idp.example.test/jwks.json']);
  });
});
