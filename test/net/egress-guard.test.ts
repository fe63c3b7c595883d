// Egress guard tests. NETWORK SAFETY: every listener binds 127.0.0.1; every name is mapped by an
// injected resolver (no DNS); a tripwire in every test fails it on any attempt to dial anything
// but a loopback literal or to call `dns`. Public addresses are only ever passed to the pure
// `decideConnect`, never dialled.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import { pino } from 'pino';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError, UpstreamError } from '../../src/errors.js';
import { createEgressDispatcher, createGuardedFetch, decideConnect, type EgressDispatcherOptions, type ResolvedAddress } from '../../src/net/egress-guard.js';
import { systemResolve } from '../../src/net/resolve-once.js';
import { installTripwire, isLoopbackLiteral, tripwireEachTest } from './tripwire.js';

// ---------------------------------------------------------------------------------------------
// Helpers

interface Seen {
  method: string;
  url: string;
  host: string | undefined;
  authorization: string | undefined;
  body: string;
}

interface Listener {
  port: number;
  origin: string;
  connections(): number;
  requests: Seen[];
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void;

const ok: Handler = (_req, res) => res.end('ok');

const cleanups: (() => Promise<void> | void)[] = [];

async function listen(handler: Handler = ok): Promise<Listener> {
  let connections = 0;
  const requests: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const seen: Seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        host: req.headers.host,
        authorization: req.headers.authorization,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      handler(req, res, seen);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const listener: Listener = {
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: () => connections,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  cleanups.push(listener.close);
  return listener;
}

/** An injected resolver over a fixed table; records every name it is asked for. */
function resolverFrom(table: Record<string, readonly string[]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
  };
  return { resolve, calls };
}

function captureLogger() {
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

function guard(options: Partial<EgressDispatcherOptions> = {}): Dispatcher {
  const dispatcher = createEgressDispatcher({ server: 'docs', allowPrivateNetwork: false, connectTimeoutMs: 5_000, ...options });
  cleanups.push(() => dispatcher.destroy());
  return dispatcher;
}

/** The error a rejected undici fetch carries from the connector (`TypeError('fetch failed', { cause })`). */
async function refusalOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => expect.fail('expected the request to be refused'),
    (e: unknown) => e,
  );
  const cause = error instanceof GatewayError ? error : (error as { cause?: unknown }).cause;
  expect(cause).toBeInstanceOf(GatewayError);
  return cause as GatewayError;
}

async function get(url: string, dispatcher: Dispatcher): Promise<string> {
  const response = await undiciFetch(url, { dispatcher });
  return response.text();
}

tripwireEachTest(cleanups);

// ---------------------------------------------------------------------------------------------

describe('decideConnect (pure: public addresses are decided here, never dialled)', () => {
  /** [label, hostname, resolved addresses or undefined, allowPrivateNetwork, expected] */
  type Expected = { dial: string } | 'resolve' | { refuse: string };
  const cases: readonly (readonly [string, string, readonly string[] | undefined, boolean, Expected])[] = [
    ['public IPv4 literal', '8.8.8.8', undefined, false, { dial: '8.8.8.8' }],
    ['public IPv6 literal in brackets', '[2606:4700:4700::1111]', undefined, false, { dial: '2606:4700:4700::1111' }],
    ['loopback literal', '127.0.0.1', undefined, false, { refuse: 'loopback' }],
    ['loopback literal, private allowed', '127.0.0.1', undefined, true, { dial: '127.0.0.1' }],
    ['IPv6 loopback in brackets', '[::1]', undefined, false, { refuse: 'loopback' }],
    ['IPv6 loopback as undici passes it', '::1', undefined, false, { refuse: 'loopback' }],
    ['metadata literal', '169.254.169.254', undefined, false, { refuse: 'linkLocal' }],
    ['IPv4-mapped metadata', '[::ffff:a9fe:a9fe]', undefined, false, { refuse: 'ipv4Mapped(linkLocal)' }],
    ['NAT64 metadata', '[64:ff9b::a9fe:a9fe]', undefined, false, { refuse: 'nat64(linkLocal)' }],
    ['IPv4-compatible metadata (WHATWG form)', '[::a9fe:a9fe]', undefined, false, { refuse: 'ipv4Compatible(linkLocal)' }],
    ['unspecified (reaches loopback listeners)', '0.0.0.0', undefined, false, { refuse: 'unspecified' }],
    ['unique local IPv6', '[fd00::1]', undefined, false, { refuse: 'uniqueLocal' }],
    ['localhost by name', 'localhost', undefined, false, { refuse: 'localhostName' }],
    ['*.localhost by name', 'api.localhost', undefined, false, { refuse: 'localhostName' }],
    ['localhost, private allowed: resolve it', 'localhost', undefined, true, 'resolve'],
    ['a name: resolve it first', 'docs.example.com', undefined, false, 'resolve'],
    ['name → public', 'docs.example.com', ['8.8.8.8'], false, { dial: '8.8.8.8' }],
    ['name → public IPv6 then IPv4', 'docs.example.com', ['2606:4700:4700::1111', '1.1.1.1'], false, { dial: '2606:4700:4700::1111' }],
    ['name → [public, private]', 'mixed.test', ['8.8.8.8', '10.1.2.3'], false, { refuse: 'private' }],
    ['name → [private, public]', 'mixed.test', ['10.1.2.3', '8.8.8.8'], false, { refuse: 'private' }],
    ['name → loopback', 'loop.test', ['127.0.0.1'], false, { refuse: 'loopback' }],
    ['name → mapped metadata', 'mapped.test', ['::ffff:169.254.169.254'], false, { refuse: 'ipv4Mapped(linkLocal)' }],
    ['name → NAT64 private', 'nat64.test', ['64:ff9b::a00:1'], false, { refuse: 'nat64(private)' }],
    ['name → link-local with zone', 'zone.test', ['fe80::1%eth0'], false, { refuse: 'linkLocal' }],
    ['name → loopback, private allowed', 'loop.test', ['127.0.0.1'], true, { dial: '127.0.0.1' }],
    ['name → nothing, even with private allowed', 'empty.test', [], true, { refuse: 'noAddress' }],
    ['name → garbage, even with private allowed', 'junk.test', ['not-an-ip'], true, { refuse: 'unparseable' }],
    ['unparseable hostname, even with private allowed', 'a*b.test', undefined, true, { refuse: 'unparseable' }],
  ];

  it.each(cases)('%s', (_label, hostname, addresses, allowPrivateNetwork, expected) => {
    const resolved = addresses?.map((address) => ({ address, family: (net.isIPv6(address.split('%')[0] ?? '') ? 6 : 4) as 4 | 6 }));
    const decision = decideConnect({ hostname, allowPrivateNetwork, ...(resolved ? { addresses: resolved } : {}) });
    if (expected === 'resolve') expect(decision).toEqual({ ok: true, action: 'resolve' });
    else if ('dial' in expected) expect(decision).toMatchObject({ ok: true, action: 'dial', address: expected.dial });
    else {
      expect(decision).toMatchObject({ ok: false, code: 'UPSTREAM_BLOCKED', range: expected.refuse });
      const { message } = decision as { message: string };
      // (`localhost` itself is the class word of `localhostName`.)
      if (hostname !== 'localhost') expect(message).not.toContain(hostname.replace(/[[\]]/g, ''));
      for (const address of addresses ?? []) expect(message).not.toContain(address);
    }
  });

  it('says which class was refused and why, and nothing else', () => {
    expect(decideConnect({ hostname: '169.254.169.254', allowPrivateNetwork: false })).toEqual({
      ok: false,
      code: 'UPSTREAM_BLOCKED',
      range: 'linkLocal',
      message: 'connection to a linkLocal address refused (allowPrivateNetwork is false)',
    });
  });
});

describe('createEgressDispatcher on literals', () => {
  it('refuses http://127.0.0.1 by default without opening a connection', async () => {
    const upstream = await listen();
    const { logger, lines } = captureLogger();
    const refusal = await refusalOf(get(`${upstream.origin}/mcp`, guard({ logger })));
    expect(refusal).toBeInstanceOf(UpstreamError);
    expect(refusal.code).toBe('UPSTREAM_BLOCKED');
    expect(refusal.server).toBe('docs');
    expect(refusal.message).toBe('upstream "docs": connection to a loopback address refused (allowPrivateNetwork is false)');
    expect(upstream.connections()).toBe(0);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ level: 40, server: 'docs', range: 'loopback', code: 'UPSTREAM_BLOCKED' });
    expect(lines[0]).not.toContain('127.0.0.1');
    expect(lines[0]).not.toContain(String(upstream.port));
  });

  it('reaches http://127.0.0.1 when the server allows private networks', async () => {
    const upstream = await listen();
    expect(await get(`${upstream.origin}/mcp`, guard({ allowPrivateNetwork: true }))).toBe('ok');
    expect(upstream.connections()).toBe(1);
    expect(upstream.requests[0]?.host).toBe(`127.0.0.1:${upstream.port}`);
  });

  it.each([
    ['[::1]', 'loopback'],
    ['[::ffff:127.0.0.1]', 'ipv4Mapped(loopback)'],
    ['[::ffff:169.254.169.254]', 'ipv4Mapped(linkLocal)'],
    ['0.0.0.0', 'unspecified'],
  ])('refuses the literal %s as %s without connecting', async (host, range) => {
    const upstream = await listen();
    const refusal = await refusalOf(get(`http://${host}:${upstream.port}/`, guard()));
    expect(refusal.message).toBe(`upstream "docs": connection to a${/^[aeiou]/i.test(range) ? 'n' : ''} ${range} address refused (allowPrivateNetwork is false)`);
    expect(upstream.connections()).toBe(0);
  });
});

describe('createEgressDispatcher on names (injected resolver only)', () => {
  it('refuses a name that resolves to 127.0.0.1, resolving it once', async () => {
    const upstream = await listen();
    const { resolve, calls } = resolverFrom({ 'loop.test': ['127.0.0.1'] });
    const refusal = await refusalOf(get(`http://loop.test:${upstream.port}/`, guard({ resolve })));
    expect(refusal.code).toBe('UPSTREAM_BLOCKED');
    expect(refusal.message).not.toContain('loop.test');
    expect(calls).toEqual(['loop.test']);
    expect(upstream.connections()).toBe(0);
  });

  it.each([
    ['metadata.test', ['169.254.169.254'], 'linkLocal'],
    ['intranet.test', ['10.1.2.3'], 'private'],
    ['mapped.test', ['::ffff:169.254.169.254'], 'ipv4Mapped(linkLocal)'],
    ['nat64.test', ['64:ff9b::a9fe:a9fe'], 'nat64(linkLocal)'],
    ['cgnat.test', ['100.64.0.1'], 'carrierGradeNat'],
    ['mixed.test', ['8.8.8.8', '10.1.2.3'], 'private'],
    ['mixed-v6.test', ['2606:4700:4700::1111', 'fd00::1'], 'uniqueLocal'],
  ])('refuses %s → %j as %s, and neither message nor log names it', async (name, addresses, range) => {
    const upstream = await listen();
    const { resolve } = resolverFrom({ [name]: addresses });
    const { logger, lines } = captureLogger();
    const refusal = await refusalOf(get(`http://${name}:${upstream.port}/`, guard({ resolve, logger })));
    expect(refusal.code).toBe('UPSTREAM_BLOCKED');
    expect(refusal.message).toContain(`a${/^[aeiou]/i.test(range) ? 'n' : ''} ${range} address refused`);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ server: 'docs', range });
    for (const text of [refusal.message, ...lines]) {
      expect(text).not.toContain(name);
      for (const address of addresses) expect(text).not.toContain(address);
    }
    expect(upstream.connections()).toBe(0);
  });

  it.each(['localhost', 'api.localhost'])('refuses %s by name without resolving it', async (name) => {
    const upstream = await listen();
    const { resolve, calls } = resolverFrom({ [name]: ['8.8.8.8'] });
    const refusal = await refusalOf(get(`http://${name}:${upstream.port}/`, guard({ resolve })));
    expect(refusal.message).toBe('upstream "docs": connection to a localhost name refused (allowPrivateNetwork is false)');
    expect(calls).toEqual([]);
  });

  it('dials the checked address and keeps the name in the Host header when private networks are allowed', async () => {
    const upstream = await listen();
    const { resolve, calls } = resolverFrom({ 'api.localhost': ['127.0.0.1'] });
    expect(await get(`http://api.localhost:${upstream.port}/mcp`, guard({ resolve, allowPrivateNetwork: true }))).toBe('ok');
    expect(calls).toEqual(['api.localhost']);
    expect(upstream.connections()).toBe(1);
    expect(upstream.requests[0]?.host).toBe(`api.localhost:${upstream.port}`);
  });

  it('sends the name, not the pinned address, as TLS SNI', async () => {
    const names: string[] = [];
    const server = tls.createServer({
      SNICallback: (name, callback) => {
        names.push(name);
        callback(new Error('no certificate in this test'), undefined);
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    const { resolve } = resolverFrom({ 'secure.test': ['127.0.0.1'] });
    await expect(get(`https://secure.test:${port}/`, guard({ resolve, allowPrivateNetwork: true }))).rejects.toThrow();
    expect(names).toEqual(['secure.test']);
  });

  it('fails with UPSTREAM_UNAVAILABLE, naming only the error code, when the name does not resolve', async () => {
    const { resolve } = resolverFrom({});
    const refusal = await refusalOf(get('http://gone.test/', guard({ resolve })));
    expect(refusal.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(refusal.message).toBe('upstream "docs": name resolution failed (ENOTFOUND)');
  });

  it('maps a resolver that throws synchronously the same way, dropping its message', async () => {
    const resolve = (): Promise<ResolvedAddress[]> => {
      throw Object.assign(new Error('lookup of secret-host.test failed'), { code: 'EAI_FAIL' });
    };
    const refusal = await refusalOf(get('http://secret-host.test/', guard({ resolve })));
    expect(refusal.message).toBe('upstream "docs": name resolution failed (EAI_FAIL)');
  });

  it('fails with UPSTREAM_TIMEOUT when resolution outlasts the connect timeout', async () => {
    const resolve = () => new Promise<ResolvedAddress[]>(() => undefined);
    const refusal = await refusalOf(get('http://slow.test/', guard({ resolve, connectTimeoutMs: 50 })));
    expect(refusal.code).toBe('UPSTREAM_TIMEOUT');
    expect(refusal.message).not.toContain('slow.test');
  });
});

describe('createEgressDispatcher and proxy environment variables', () => {
  const PROXY_VARS = ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy', 'NO_PROXY', 'no_proxy'];
  const saved = new Map<string, string | undefined>();

  beforeEach(() => {
    for (const name of PROXY_VARS) saved.set(name, process.env[name]);
  });
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('never sends a request through HTTP_PROXY', async () => {
    const proxy = await listen();
    const upstream = await listen();
    for (const name of ['HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'ALL_PROXY', 'all_proxy']) {
      process.env[name] = proxy.origin;
    }
    delete process.env.NO_PROXY;
    delete process.env.no_proxy;
    expect(await get(`${upstream.origin}/mcp`, guard({ allowPrivateNetwork: true }))).toBe('ok');
    expect(upstream.connections()).toBe(1);
    expect(proxy.connections()).toBe(0);
  });
});

describe('createEgressDispatcher options', () => {
  it.each([
    ['an empty server name', { server: '' }],
    ['a zero connect timeout', { connectTimeoutMs: 0 }],
    ['a fractional connect timeout', { connectTimeoutMs: 1.5 }],
    ['a non-boolean allowPrivateNetwork', { allowPrivateNetwork: 'yes' as unknown as boolean }],
  ])('refuses %s at construction', (_label, bad) => {
    expect(() => createEgressDispatcher({ server: 'docs', allowPrivateNetwork: false, connectTimeoutMs: 1000, ...bad })).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------------------------------------

describe('createGuardedFetch redirects', () => {
  function redirect(res: http.ServerResponse, status: number, location: string, extra: http.OutgoingHttpHeaders = {}): void {
    res.writeHead(status, { location, ...extra }).end();
  }

  function guardedFetch(options: Partial<EgressDispatcherOptions> = {}, maxRedirects?: number) {
    const { logger, lines } = captureLogger();
    const dispatcher = guard({ allowPrivateNetwork: true, logger, ...options });
    const fetch = createGuardedFetch({ server: 'docs', dispatcher, logger, ...(maxRedirects === undefined ? {} : { maxRedirects }) });
    return { fetch, lines };
  }

  it('follows a same-origin redirect', async () => {
    const upstream = await listen((req, res) => (req.url === '/start' ? redirect(res, 302, '/final') : res.end('final')));
    const { fetch } = guardedFetch();
    const response = await fetch(`${upstream.origin}/start`);
    expect(await response.text()).toBe('final');
    expect(upstream.requests.map((r) => r.url)).toEqual(['/start', '/final']);
  });

  it('replays a POST body and its injected Authorization across a same-origin 307', async () => {
    const upstream = await listen((req, res, seen) =>
      req.url === '/mcp' ? redirect(res, 307, '/mcp/v2') : res.end(JSON.stringify(seen)),
    );
    const { fetch } = guardedFetch();
    const response = await fetch(`${upstream.origin}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer configured', 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(JSON.parse(await response.text())).toMatchObject({
      method: 'POST',
      url: '/mcp/v2',
      authorization: 'Bearer configured',
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
  });

  it('refuses a redirect to another loopback port (another origin) before connecting to it', async () => {
    const other = await listen();
    const upstream = await listen((_req, res) => redirect(res, 302, `${other.origin}/steal`));
    const { fetch, lines } = guardedFetch();
    const refusal = await refusalOf(fetch(`${upstream.origin}/mcp`, { headers: { 'x-api-key': 'secret-key' } }));
    expect(refusal).toBeInstanceOf(UpstreamError);
    expect(refusal.code).toBe('UPSTREAM_BLOCKED');
    expect(refusal.message).toBe('upstream "docs": cross-origin redirect refused');
    expect(other.connections()).toBe(0);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ server: 'docs', reason: 'cross-origin redirect refused' });
    expect(lines.join('\n')).not.toContain(String(other.port));
  });

  it.each([
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['the same host over https', 'https://127.0.0.1/mcp'],
    ['a non-http scheme', 'file:///etc/passwd'],
  ])('refuses a redirect to %s as cross-origin', async (_label, location) => {
    const upstream = await listen((_req, res) => redirect(res, 301, location));
    const { fetch } = guardedFetch();
    const refusal = await refusalOf(fetch(`${upstream.origin}/mcp`));
    expect(refusal.message).toBe('upstream "docs": cross-origin redirect refused');
  });

  it('refuses the sixth redirect', async () => {
    const upstream = await listen((req, res) => redirect(res, 302, `/hop${Number(req.url?.slice(4) || 0) + 1}`));
    const { fetch } = guardedFetch();
    const refusal = await refusalOf(fetch(`${upstream.origin}/hop0`));
    expect(refusal.message).toBe('upstream "docs": more than 5 redirects refused');
    expect(upstream.requests.map((r) => r.url)).toEqual(['/hop0', '/hop1', '/hop2', '/hop3', '/hop4', '/hop5']);
  });

  it.each([301, 302, 303])('refuses a %i redirect of a POST (it would become a bodiless GET)', async (status) => {
    const upstream = await listen((_req, res) => redirect(res, status, '/elsewhere'));
    const { fetch } = guardedFetch();
    const refusal = await refusalOf(fetch(`${upstream.origin}/mcp`, { method: 'POST', body: '{}' }));
    expect(refusal.message).toBe('upstream "docs": redirect that changes the request method refused');
    expect(upstream.requests).toHaveLength(1);
  });

  it('refuses a same-origin redirect that carries credentials, without echoing them', async () => {
    const upstream = await listen((_req, res) => redirect(res, 302, `http://user:hunter2@127.0.0.1:${upstream.port}/x`));
    const { fetch } = guardedFetch();
    const refusal = await refusalOf(fetch(`${upstream.origin}/mcp`));
    expect(refusal.message).toBe('upstream "docs": redirect carrying credentials refused');
  });

  it('sends each hop through the egress guard (a new connection resolves and is checked again)', async () => {
    const upstream = await listen((req, res) =>
      req.url === '/start' ? redirect(res, 302, '/final', { connection: 'close' }) : res.end('final'),
    );
    const { resolve, calls } = resolverFrom({ 'loop.test': ['127.0.0.1'] });
    const { fetch } = guardedFetch({ resolve });
    const response = await fetch(`http://loop.test:${upstream.port}/start`);
    expect(await response.text()).toBe('final');
    expect(calls).toEqual(['loop.test', 'loop.test']);
    expect(upstream.connections()).toBe(2);
  });

  it('surfaces the guard refusal itself, not undici’s "fetch failed"', async () => {
    const upstream = await listen();
    const fetch = createGuardedFetch({ server: 'docs', dispatcher: guard() });
    await expect(fetch(`${upstream.origin}/mcp`)).rejects.toMatchObject({ name: 'UpstreamError', code: 'UPSTREAM_BLOCKED' });
    expect(upstream.connections()).toBe(0);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the tripwire itself (proved on loopback only)', () => {
  it('throws before connecting to a forbidden address and records it', () => {
    const inner = installTripwire({ forbid: ['127.0.0.2'] });
    try {
      expect(() => net.connect({ host: '127.0.0.2', port: 9 })).toThrow(/tripwire/);
      expect(() => tls.connect({ host: '127.0.0.2', port: 9 })).toThrow(/tripwire/);
      expect(inner.violations).toEqual(['connect 127.0.0.2:9', 'tls.connect 127.0.0.2:9']);
    } finally {
      inner.restore();
    }
  });

  it('catches a dial made by the egress dispatcher (the path a guard bug would take)', async () => {
    const inner = installTripwire({ forbid: ['127.0.0.2'] });
    try {
      const { resolve } = resolverFrom({ 'forbidden.test': ['127.0.0.2'] });
      // Not port 9: fetch refuses its "bad ports" before dialling.
      await expect(get('http://forbidden.test:39999/', guard({ resolve, allowPrivateNetwork: true }))).rejects.toThrow();
      await expect(get('https://forbidden.test:39999/', guard({ resolve, allowPrivateNetwork: true }))).rejects.toThrow();
      expect(inner.violations).toEqual(['connect 127.0.0.2:39999', 'tls.connect 127.0.0.2:39999']);
    } finally {
      inner.restore();
    }
  });

  it('intercepts the default resolver (asked about a numeric loopback address, so nothing could leave)', async () => {
    const inner = installTripwire({ forbid: ['127.0.0.2'] });
    try {
      await expect(systemResolve('127.0.0.2')).rejects.toThrow(/tripwire/);
      expect(inner.violations).toEqual(['dns.promises.lookup 127.0.0.2']);
    } finally {
      inner.restore();
    }
  });

  it.each([
    ['127.0.0.1', true],
    ['127.9.9.9', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['169.254.169.254', false],
    ['::', false],
    ['0.0.0.0', false],
    ['localhost', false],
  ])('treats %s as loopback: %s', (host, expected) => {
    expect(isLoopbackLiteral(host)).toBe(expected);
  });
});
