/**
 * The egress guard for the gateway's plain TCP connections (its Redis clients) and for plaintext
 * connections that must stay on the private network. Real sockets on 127.0.0.1 only; names are
 * resolved by an injected resolver, and `dns` is made to throw, so nothing here can ask a DNS
 * server anything; public addresses are only ever refused as literals, before a socket exists.
 */
import dns from 'node:dns';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decideConnect } from '../../src/net/egress-guard.js';
import { guardTcpHost } from '../../src/net/guarded-lookup.js';
import { installTripwire, type Tripwire } from './tripwire.js';

describe('decideConnect for plaintext that must stay private (allowPublic: false)', () => {
  const publicAnswer = [{ address: '93.184.216.34', family: 4 as const }];
  const privateAnswer = [{ address: '10.1.2.3', family: 4 as const }];

  it('refuses a public literal, IPv4 or IPv6, naming the class only', () => {
    for (const hostname of ['93.184.216.34', '[2606:4700::1111]']) {
      const decision = decideConnect({ hostname, allowPrivateNetwork: true, allowPublic: false });
      expect(decision).toMatchObject({ ok: false, code: 'UPSTREAM_BLOCKED', range: 'public' });
      if (!decision.ok) expect(decision.message).not.toMatch(/93\.184|2606/);
    }
  });

  it('refuses a name with any public answer, and dials a private one', () => {
    expect(decideConnect({ hostname: 'redis.test', allowPrivateNetwork: true, allowPublic: false, addresses: [...privateAnswer, ...publicAnswer] })).toMatchObject({ ok: false, range: 'public' });
    expect(decideConnect({ hostname: 'redis.test', allowPrivateNetwork: true, allowPublic: false, addresses: privateAnswer })).toMatchObject({ ok: true, action: 'dial', address: '10.1.2.3' });
  });

  it('changes nothing for an encrypted connection (allowPublic absent or true)', () => {
    expect(decideConnect({ hostname: '93.184.216.34', allowPrivateNetwork: false })).toMatchObject({ ok: true, action: 'dial' });
    expect(decideConnect({ hostname: 'redis.test', allowPrivateNetwork: false, allowPublic: true, addresses: publicAnswer })).toMatchObject({ ok: true, action: 'dial' });
  });
});

describe('guardTcpHost on a literal', () => {
  let wire: Tripwire;
  beforeEach(() => (wire = installTripwire()));
  afterEach(() => {
    wire.restore();
    expect(wire.violations).toEqual([]);
  });

  const options = { server: 'eventStore.url', connectTimeoutMs: 1_000 };

  it('throws for a loopback or private literal without the opt-in, naming the field and never the address', () => {
    for (const host of ['127.0.0.1', '10.0.0.5', '[::1]', '169.254.169.254']) {
      expect(() => guardTcpHost(host, { ...options, allowPrivateNetwork: false })).toThrow(/^eventStore\.url: connection to an? \w+ address refused/);
      try {
        guardTcpHost(host, { ...options, allowPrivateNetwork: false });
      } catch (error) {
        expect((error as Error).message).not.toContain(host.replace(/[[\]]/g, ''));
        expect((error as { code?: string }).code).toBe('UPSTREAM_BLOCKED');
      }
    }
  });

  it('throws for a public literal over plaintext, and accepts loopback with the opt-in', () => {
    expect(() => guardTcpHost('93.184.216.34', { ...options, allowPrivateNetwork: true, allowPublic: false })).toThrow(/public address refused/);
    expect(guardTcpHost('127.0.0.1', { ...options, allowPrivateNetwork: true, allowPublic: false }).lookup).toBeTypeOf('function');
  });
});

describe('guardTcpHost on a name: the lookup net.connect uses', () => {
  let server: net.Server;
  let port = 0;
  let connections = 0;
  const originalLookup = dns.lookup;
  const originalPromisesLookup = dns.promises.lookup;

  beforeAll(async () => {
    server = net.createServer((socket) => {
      connections += 1;
      socket.end();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
    const refuse = () => {
      throw new Error('dns must not be used: the guard resolves with its own resolver');
    };
    dns.lookup = refuse as unknown as typeof dns.lookup;
    dns.promises.lookup = refuse as unknown as typeof dns.promises.lookup;
  });
  afterAll(async () => {
    dns.lookup = originalLookup;
    dns.promises.lookup = originalPromisesLookup;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => (connections = 0));

  const toLoopback = async () => [{ address: '127.0.0.1', family: 4 as const }];

  function connect(lookup: net.LookupFunction): Promise<'connected' | string> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: 'redis.test', port, lookup });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
  }

  it('dials the checked address when the field opted into the private network', async () => {
    const { lookup } = guardTcpHost('redis.test', { server: 'eventStore.url', allowPrivateNetwork: true, connectTimeoutMs: 1_000, resolve: toLoopback });
    expect(await connect(lookup)).toBe('connected');
  });

  it('refuses before any socket reaches the address when it did not', async () => {
    const { lookup } = guardTcpHost('redis.test', { server: 'eventStore.url', allowPrivateNetwork: false, connectTimeoutMs: 1_000, resolve: toLoopback });
    expect(await connect(lookup)).toBe('UPSTREAM_BLOCKED');
    expect(connections).toBe(0);
  });
});
