/**
 * The reload diff: which changes a running gateway takes (add, remove, restart, re-filter, denied
 * tools, body limits) and which it refuses as needing a restart, each named by field and never by
 * value.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { diffConfigs, isEmptyDiff } from '../../src/lifecycle/config-diff.js';

const SECRET = 'tok-9f8e7d6c5b4a';
const base = {
  listen: { host: '127.0.0.1', port: 0 },
  servers: {
    a: { transport: 'stdio', command: 'node', args: ['a.js'] },
    b: { transport: 'streamableHttp', url: 'https://b.example.com/mcp', headers: { 'X-Key': SECRET } },
  },
};
const config = (patch: (raw: typeof base & Record<string, unknown>) => void) => {
  const raw = structuredClone(base) as typeof base & Record<string, unknown>;
  patch(raw);
  return parseConfig(raw);
};
const running = parseConfig(base);

describe('diffConfigs', () => {
  it('finds nothing to do in the same configuration read twice', () => {
    expect(isEmptyDiff(diffConfigs(running, parseConfig(structuredClone(base))))).toBe(true);
  });

  it('re-filters a server whose tool lists alone changed, without restarting it', () => {
    const diff = diffConfigs(running, config((raw) => Object.assign(raw.servers.a, { disabledTools: ['write'] })));
    expect(diff).toMatchObject({ restart: [], refilter: ['a'], deniedTools: false, needsRestart: [] });
  });

  it('restarts only the server whose entry changed', () => {
    const diff = diffConfigs(running, config((raw) => (raw.servers.b.headers['X-Key'] = 'another-secret-value')));
    expect(diff).toMatchObject({ restart: ['b'], refilter: [], needsRestart: [] });
  });

  it('refuses a change of a server\'s enabled default: enablement reads it at start', () => {
    const diff = diffConfigs(running, config((raw) => Object.assign(raw.servers.a, { enabled: false })));
    expect(diff).toMatchObject({ restart: [], refilter: [] });
    expect(diff.needsRestart).toEqual(['servers.a.enabled: changed; this needs a restart']);
  });

  it('refuses a change of a server\'s upstreamAuth: its token source is built once', () => {
    const auth = { kind: 'clientCredentials', tokenUrl: 'https://idp.example.com/token', clientId: 'c', clientSecretEnv: 'B_SECRET' };
    const withAuth = config((raw) => Object.assign(raw.servers.b, { headers: {}, upstreamAuth: auth }));
    const changed = config((raw) => Object.assign(raw.servers.b, { headers: {}, upstreamAuth: { ...auth, tokenUrl: 'https://idp2.example.com/token' } }));
    expect(diffConfigs(withAuth, changed).needsRestart).toEqual(['servers.b.upstreamAuth: changed; this needs a restart']);
    expect(isEmptyDiff(diffConfigs(withAuth, config((raw) => Object.assign(raw.servers.b, { headers: {}, upstreamAuth: auth }))))).toBe(true);
  });

  it('takes new body limits live', () => {
    const diff = diffConfigs(running, config((raw) => (raw.limits = { maxBodyBytes: 4096 })));
    expect(diff).toMatchObject({ bodyLimits: true, needsRestart: [] });
  });

  it('names every change that needs a restart by field, never by value', () => {
    const next = config((raw) => {
      raw.listen.port = 1234;
      raw.sessions = { max: 5 };
      raw.limits = { maxHeaderBytes: 8192 };
      Object.assign(raw.servers, { c: { transport: 'stdio', command: 'node', args: [SECRET] } });
      delete (raw.servers as Record<string, unknown>).a;
      raw.servers.b = { ...raw.servers.b, isolation: 'shared' } as typeof raw.servers.b;
    });
    const diff = diffConfigs(running, next);
    expect(diff.needsRestart).toEqual([
      'listen: changed; this setting applies when the gateway starts',
      'sessions: changed; this setting applies when the gateway starts',
      'limits.maxHeaderBytes: changed; this limit applies when the gateway starts',
      'servers.b.isolation: changed; this needs a restart',
    ]);
    expect(diff.remove).toEqual(['a']);
    expect(diff.add).toEqual(['c']);
    expect(JSON.stringify(diff)).not.toContain(SECRET);
  });

  it('withdraws a server the new configuration no longer names, restarting and refusing nothing', () => {
    const diff = diffConfigs(running, config((raw) => delete (raw.servers as Record<string, unknown>).a));
    expect(diff).toMatchObject({ remove: ['a'], restart: [], refilter: [], needsRestart: [] });
  });

  it('adds a server the new configuration names for the first time, restarting and refusing nothing', () => {
    const diff = diffConfigs(running, config((raw) => Object.assign(raw.servers, { c: { transport: 'stdio', command: 'node', args: ['c.js'] } })));
    expect(diff).toMatchObject({ add: ['c'], remove: [], restart: [], refilter: [], needsRestart: [] });
    expect(isEmptyDiff(diff)).toBe(false);
  });

  it('adds again a server an earlier reload removed when it keeps its transport and isolation', () => {
    const earlier = running.servers.a!;
    const next = config((raw) => Object.assign(raw.servers, { c: { transport: 'stdio', command: 'node', args: ['other.js'], enabled: false } }));
    const diff = diffConfigs(running, next, running.servers, next.servers, new Map([['c', earlier]]));
    expect(diff).toMatchObject({ add: ['c'], needsRestart: [] });
  });

  it('refuses naming again a removed server with another transport or isolation, by field and never by value', () => {
    const earlier = running.servers.a!;
    const next = config((raw) => Object.assign(raw.servers, { c: { transport: 'streamableHttp', url: `https://c.example.com/${SECRET}`, isolation: 'shared' } }));
    const diff = diffConfigs(running, next, running.servers, next.servers, new Map([['c', earlier]]));
    expect(diff.add).toEqual([]);
    expect(diff.needsRestart).toEqual([
      'servers.c.transport: differs from the server of that name a reload removed; naming it again with another transport needs a restart',
      'servers.c.isolation: differs from the server of that name a reload removed; naming it again with another isolation needs a restart',
    ]);
    expect(JSON.stringify(diff)).not.toContain(SECRET);
  });

  it('refuses naming again a removed server that had per-user credentials, whatever the new entry says', () => {
    // Its old entry (no primary, sessions' token stores) would come back as it was built.
    const earlier = parseConfig({ servers: { c: { transport: 'streamableHttp', url: 'https://c.example.com/mcp', upstreamAuth: { kind: 'perUser' } } } }).servers.c!;
    const next = config((raw) => Object.assign(raw.servers, { c: { transport: 'streamableHttp', url: 'https://c.example.com/mcp' } }));
    const diff = diffConfigs(running, next, running.servers, next.servers, new Map([['c', earlier]]));
    expect(diff.add).toEqual([]);
    // Its isolation differs too: perUser defaults to session, the new entry to principal.
    expect(diff.needsRestart).toEqual([
      'servers.c.isolation: differs from the server of that name a reload removed; naming it again with another isolation needs a restart',
      'servers.c.upstreamAuth: the server of that name a reload removed had perUser credentials; naming it again needs a restart',
    ]);
  });
});
