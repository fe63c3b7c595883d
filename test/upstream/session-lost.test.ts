/**
 * An HTTP upstream that forgets a session (restart, expiry) answers 404 to the session's next
 * request (MCP 2025-11-25, Transports, "Session Management"); the upstream kind says so
 * (`upstreamSessionLost`) and the call is retried once on a fresh connection. A 2025 session's own
 * connection to a Streamable HTTP upstream asks for the 2025 handshake first (`connect2025`).
 * The real path runs a session scope over the HTTP fixture behind a proxy that forgets sessions
 * on demand; NETWORK SAFETY: everything binds and dials 127.0.0.1.
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamError, UpstreamHttpError } from '../../src/errors.js';
import { createEgressDispatcher } from '../../src/net/egress-guard.js';
import { SessionScope } from '../../src/routing/scopes/scopes.js';
import { connect2025, upstreamSessionLost } from '../../src/upstream/connector.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import type { ReadyProcess } from '../fixtures/spawn-until-ready.js';
import { forwardTo, listenOnLoopback } from '../integration/harness/loopback-proxy.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { httpServer, startHttpFixture, stdioServer } from '../integration/harness/upstreams.js';
import { deps, logger, recordingSink, serverConfigs } from './fixture-link.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';

const http404 = () => new UpstreamHttpError('web', 404);
const configs = serverConfigs({
  local: stdioServer(newMarker()),
  web: httpServer('http://127.0.0.1:1/mcp'),
  old: { transport: 'sse', url: 'http://127.0.0.1:1/sse', allowPrivateNetwork: true },
});

describe('upstreamSessionLost', () => {
  it.each([
    ['a 404 from a Streamable HTTP upstream', 'web', http404(), true],
    ['a 404 wrapped by the link', 'web', new UpstreamError('UPSTREAM_UNAVAILABLE', 'web', 'answered HTTP 404', http404()), true],
    ['a 404 from an HTTP+SSE upstream', 'old', http404(), true],
    ['another HTTP status', 'web', new UpstreamHttpError('web', 500), false],
    ['a 404 in words only, with no status', 'web', new UpstreamError('UPSTREAM_UNAVAILABLE', 'web', 'answered HTTP 404'), false],
    ['an error that is not HTTP', 'web', new Error('boom'), false],
    ['anything from a stdio child, even an HTTP-looking error', 'local', http404(), false],
  ])('%s: %s', (_what, server, error, lost) => {
    expect(upstreamSessionLost(configs[server]!, error)).toBe(lost);
  });
});

describe('connect2025', () => {
  it('asks a Streamable HTTP upstream for the 2025 handshake first, then negotiates', async () => {
    const asked: Array<string | undefined> = [];
    const opened = await connect2025(configs.web!, async (negotiation) => {
      asked.push(negotiation);
      if (negotiation === '2025') throw new Error('2026 only');
      return 'negotiated';
    }, logger);
    expect(opened).toBe('negotiated');
    expect(asked).toEqual(['2025', undefined]);
  });

  it('connects once when the 2025 handshake works, and once for kinds that always speak 2025', async () => {
    for (const [server, expected] of [['web', ['2025']], ['local', [undefined]], ['old', [undefined]]] as const) {
      const asked: Array<string | undefined> = [];
      await connect2025(configs[server]!, async (negotiation) => void asked.push(negotiation), logger);
      expect(asked).toEqual(expected);
    }
  });
});

describe('a 2025 session over a Streamable HTTP upstream that forgets its session', () => {
  let fixture: ReadyProcess;
  let proxy: { url: string; forgetNext(): void; initializes: () => number; forgotten: () => number; close(): Promise<void> };
  let registry: UpstreamRegistry;

  beforeAll(async () => {
    assertBuilt();
    fixture = await startHttpFixture();
    proxy = await forgettingProxy(fixture.match);
    registry = new UpstreamRegistry({
      servers: serverConfigs({ web: httpServer(proxy.url, { isolation: 'session' }) }),
      statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
      maxSessionChildren: 4,
      deps: { ...deps, dispatcherFor: (server, config) => createEgressDispatcher({ server, allowPrivateNetwork: config.allowPrivateNetwork, connectTimeoutMs: 5_000, logger }) },
      logger,
    });
  });
  afterAll(async () => {
    await registry?.close();
    await proxy?.close();
    await fixture?.stop();
  });

  it('re-initialises on a fresh connection and answers the call, transparently', async () => {
    const scope = new SessionScope({ registry, servers: ServerRoster.of(['web']), catalogue: { separator: '__', toolFilter: () => true }, logger }, { owner: recordingSink(), clientCapabilities: () => ({}) });
    const echo = (text: string) => scope.withLink('web', (link) => link.request('tools/call', { name: 'echo', arguments: { text } }, { sink: recordingSink() }));
    try {
      expect(await echo('first')).toMatchObject({ content: [{ text: 'first' }] });
      const initializes = proxy.initializes();
      proxy.forgetNext();
      expect(await echo('after restart')).toMatchObject({ content: [{ text: 'after restart' }] });
      expect(proxy.forgotten()).toBe(1);
      expect(proxy.initializes()).toBe(initializes + 1);
    } finally {
      await scope.close();
    }
  });
});

/**
 * A proxy on 127.0.0.1 in front of `target` that, once armed, answers the next POST carrying a
 * session id with 404 (as an upstream that restarted would) and counts `initialize` requests.
 */
async function forgettingProxy(target: string) {
  const upstream = new URL(target);
  let armed = false;
  let forgotten = 0;
  let initializes = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method === 'POST' && body.toString('utf8').includes('"method":"initialize"')) initializes++;
      if (armed && req.method === 'POST' && req.headers['mcp-session-id'] !== undefined) {
        armed = false;
        forgotten++;
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}');
        return;
      }
      forwardTo(upstream, req, res, body);
    });
  });
  return {
    ...(await listenOnLoopback(server, upstream.pathname)),
    forgetNext: () => void (armed = true),
    initializes: () => initializes,
    forgotten: () => forgotten,
  };
}
