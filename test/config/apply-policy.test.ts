import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { EMBEDDED_DEFAULT_POLICY } from '../../src/policy/policy-load.js';

const SECRET_URL = 'https://mcp.internal.example.com/mcp?token=s3cr3t-url-token';
const SECRET_COMMAND = '/opt/secret-tools/bin/run-with-token-s3cr3t';
const SECRET_VALUE = '--require=/tmp/s3cr3t-hook.js';

const dir = mkdtempSync(join(tmpdir(), 'portcullis-config-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writePolicy(name: string, policy: unknown): string {
  writeFileSync(join(dir, name), JSON.stringify(policy));
  return `./${name}`;
}

function problemsOf(raw: unknown): string[] {
  try {
    parseConfig(raw, { baseDir: dir });
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

const http = (extra: Record<string, unknown> = {}) => ({ transport: 'streamableHttp', url: 'https://docs.example.com/mcp', ...extra });
const stdio = (extra: Record<string, unknown> = {}) => ({ transport: 'stdio', command: SECRET_COMMAND, ...extra });

describe('parseConfig: the policy a config runs under', () => {
  it('uses the embedded default when the config names no policy', () => {
    const config = parseConfig({ servers: {} });
    expect(config.policy).toBe(EMBEDDED_DEFAULT_POLICY);
    expect(config.sessions).toEqual({
      max: 1000,
      idleTimeoutMs: 1_800_000,
      // Without auth every client is one anonymous principal: the quota is the gateway's cap.
      maxPerPrincipal: 1000,
      initializePerMinute: 1000,
      maxChildrenPerServer: 32,
      childIdleTimeoutMs: 300_000,
    });
    expect(config.limits).toEqual({ maxBodyBytes: 1_048_576, maxJsonDepth: 64, maxHeaderBytes: 16_384, maxUpstreamMessageBytes: 16 * 1024 * 1024 });
    expect(config.eventStore).toMatchObject({ maxSessionBytes: 16 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024 });
  });

  it('takes the strict policy’s tighter message and history budgets', () => {
    const config = parseConfig({ policy: 'strict', servers: {} });
    expect(config.limits.maxUpstreamMessageBytes).toBe(8 * 1024 * 1024);
    expect(config.eventStore).toMatchObject({ maxSessionBytes: 8 * 1024 * 1024, maxTotalBytes: 128 * 1024 * 1024 });
  });

  it('never promises one session more history than the whole process keeps', () => {
    const config = parseConfig({ servers: {}, eventStore: { maxTotalBytes: 4 * 1024 * 1024 } });
    expect(config.eventStore).toMatchObject({ maxSessionBytes: 4 * 1024 * 1024, maxTotalBytes: 4 * 1024 * 1024 });
  });

  it('loads a shipped policy by name', () => {
    const config = parseConfig({ policy: 'strict', servers: { files: stdio() } });
    expect(config.policy.privateNetwork.allowServers).toBe(false);
    expect(config.sessions.max).toBe(200);
  });

  it('loads a policy file relative to the config file', async () => {
    writePolicy('team.json', { deniedTools: ['*__rm'], limits: { maxSessions: 5 } });
    const path = join(dir, 'gateway.json');
    writeFileSync(path, JSON.stringify({ policy: './team.json', servers: {} }));
    const config = await loadConfigFile(path);
    expect(config.policy.deniedTools).toEqual(['*__rm']);
    expect(config.sessions.max).toBe(5);
    expect(Object.isFrozen(config.policy)).toBe(true);
  });

  it('lets the config narrow a limit', () => {
    const config = parseConfig({
      servers: {},
      sessions: { max: 10, idleTimeoutMs: 60_000, maxPerPrincipal: 4, initializePerMinute: 30, maxChildrenPerServer: 3, childIdleTimeoutMs: 20_000 },
      limits: { maxBodyBytes: 4096, maxJsonDepth: 16, maxHeaderBytes: 8192, maxUpstreamMessageBytes: 65_536 },
      eventStore: { maxSessionBytes: 100_000, maxTotalBytes: 1_000_000 },
    });
    expect(config.sessions).toEqual({ max: 10, idleTimeoutMs: 60_000, maxPerPrincipal: 4, initializePerMinute: 30, maxChildrenPerServer: 3, childIdleTimeoutMs: 20_000 });
    expect(config.limits).toEqual({ maxBodyBytes: 4096, maxJsonDepth: 16, maxHeaderBytes: 8192, maxUpstreamMessageBytes: 65_536 });
    expect(config.eventStore).toMatchObject({ maxSessionBytes: 100_000, maxTotalBytes: 1_000_000 });
  });

  it('gives each principal the policy’s session quota when authentication is on', () => {
    const auth = { kind: 'bearer', tokens: [{ principal: 'alice', env: 'ALICE_TOKEN' }] };
    expect(parseConfig({ servers: {}, auth }).sessions.maxPerPrincipal).toBe(100);
    expect(parseConfig({ policy: 'strict', servers: {}, auth }).sessions.maxPerPrincipal).toBe(20);
  });

  it('never lets an idle child outlive its session by default', () => {
    expect(parseConfig({ servers: {}, sessions: { idleTimeoutMs: 60_000 } }).sessions.childIdleTimeoutMs).toBe(60_000);
  });

  it('lets a server opt into private networks when the policy allows it', () => {
    const config = parseConfig({ servers: { local: http({ url: 'http://127.0.0.1:9/mcp', allowPrivateNetwork: true }) } });
    expect(config.servers.local).toMatchObject({ allowPrivateNetwork: true });
  });

  it('accepts an upstream whose host the policy lists', () => {
    const policy = writePolicy('hosts.json', { upstreamHosts: ['*.example.com'] });
    expect(problemsOf({ policy, servers: { docs: http() } })).toEqual([]);
  });

  it('reports a policy that cannot be loaded, with the other problems', () => {
    const problems = problemsOf({ policy: './missing.json', servers: { files: { transport: 'ftp' } } });
    expect(problems).toContain('policy: cannot read the policy file (ENOENT)');
    expect(problems.some((p) => p.startsWith('servers.files'))).toBe(true);
  });

  it('reports an invalid policy file by field', () => {
    const policy = writePolicy('invalid.json', { privateNetwork: { allowServers: 'no' } });
    expect(problemsOf({ policy, servers: {} })[0]).toMatch(/^policy\.privateNetwork\.allowServers: /);
  });
});

describe('parseConfig: a config may not widen its policy', () => {
  const noPrivate = writePolicy('no-private.json', { privateNetwork: { allowServers: false } });
  const hostsOnly = writePolicy('hosts-only.json', { upstreamHosts: ['docs.example.com', '*.corp.example'] });
  const envAllow = writePolicy('env-allow.json', { envHeaderNames: { allow: ['DOCS_TOKEN'] } });
  const noSse = writePolicy('no-sse.json', { legacySse: { upstream: false } });
  const small = writePolicy('small.json', {
    limits: { maxBodyBytes: 2048, maxJsonDepth: 8, maxSessions: 10, sessionIdleTimeoutMs: 60_000, maxHeaderBytes: 4096, maxSessionsPerPrincipal: 2, initializePerMinute: 5, maxSessionChildrenPerServer: 3, maxUpstreamMessageBytes: 4096, maxSessionHistoryBytes: 8192, maxHistoryBytes: 16_384 },
  });

  const cases: Array<[string, unknown, string]> = [
    ['a server opting into private networks under a policy that forbids it', { policy: noPrivate, servers: { docs: http({ allowPrivateNetwork: true }) } }, 'servers.docs.allowPrivateNetwork: the policy does not allow private-network upstreams'],
    ['a shipped strict policy refusing private networks', { policy: 'strict', servers: { docs: http({ url: 'http://127.0.0.1:9/mcp', allowPrivateNetwork: true }) } }, 'servers.docs.allowPrivateNetwork: the policy does not allow private-network upstreams'],
    ['an upstream host not in upstreamHosts', { policy: hostsOnly, servers: { docs: http({ url: SECRET_URL }) } }, "servers.docs.url: host is not in the policy's upstreamHosts"],
    ['the bare domain of a wildcard entry', { policy: hostsOnly, servers: { docs: http({ url: 'https://corp.example/mcp' }) } }, "servers.docs.url: host is not in the policy's upstreamHosts"],
    ['any HTTP upstream under strict (empty upstreamHosts)', { policy: 'strict', servers: { docs: http() } }, "servers.docs.url: host is not in the policy's upstreamHosts"],
    ['an sse server under the strict policy', { policy: 'strict', servers: { old: { transport: 'sse', url: SECRET_URL } } }, 'servers.old.transport: the policy does not allow "sse" upstreams (policy legacySse.upstream is false)'],
    ['an imported type "sse" entry under a policy without sse upstreams', { policy: noSse, mcpServers: { old: { type: 'sse', url: SECRET_URL } } }, 'servers.old.transport: the policy does not allow "sse" upstreams (policy legacySse.upstream is false)'],
    ['an sse server opting into private networks under a policy that forbids it', { policy: noPrivate, servers: { old: { transport: 'sse', url: SECRET_URL, allowPrivateNetwork: true } } }, 'servers.old.allowPrivateNetwork: the policy does not allow private-network upstreams'],
    ['an sse server outside upstreamHosts', { policy: hostsOnly, servers: { old: { transport: 'sse', url: SECRET_URL } } }, "servers.old.url: host is not in the policy's upstreamHosts"],
    ['an sse server reading a cloud credential', { servers: { old: { transport: 'sse', url: SECRET_URL, envHeaders: { Authorization: 'AWS_SECRET_ACCESS_KEY' } } } }, 'servers.old.envHeaders.Authorization: the policy does not allow reading this variable'],
    ['a stdio server setting NODE_OPTIONS', { servers: { x: stdio({ env: { NODE_OPTIONS: SECRET_VALUE } }) } }, 'servers.x.env.NODE_OPTIONS: the policy forbids setting this variable'],
    ['a stdio server setting LD_PRELOAD in lower case', { servers: { x: stdio({ env: { ld_preload: SECRET_VALUE } }) } }, 'servers.x.env.ld_preload: the policy forbids setting this variable'],
    ['a stdio server setting a proxy', { servers: { x: stdio({ env: { HTTPS_PROXY: 'http://proxy.example:3128' } }) } }, 'servers.x.env.HTTPS_PROXY: the policy forbids setting this variable'],
    ['a Claude Desktop entry setting DYLD_INSERT_LIBRARIES', { mcpServers: { x: { command: SECRET_COMMAND, env: { DYLD_INSERT_LIBRARIES: SECRET_VALUE } } } }, 'servers.x.env.DYLD_INSERT_LIBRARIES: the policy forbids setting this variable'],
    ['envHeaders reading a cloud credential', { servers: { docs: http({ envHeaders: { Authorization: 'AWS_SECRET_ACCESS_KEY' } }) } }, 'servers.docs.envHeaders.Authorization: the policy does not allow reading this variable'],
    ['envHeaders reading a variable outside an allowlist', { policy: envAllow, servers: { docs: http({ envHeaders: { 'X-Key': 'OTHER_TOKEN' } }) } }, 'servers.docs.envHeaders.X-Key: the policy does not allow reading this variable'],
    ['sessions.max above the policy', { policy: small, servers: {}, sessions: { max: 11 } }, 'sessions.max: exceeds the policy limit (policy limits.maxSessions is 10)'],
    ['sessions.idleTimeoutMs above the policy', { policy: small, servers: {}, sessions: { idleTimeoutMs: 60_001 } }, 'sessions.idleTimeoutMs: exceeds the policy limit (policy limits.sessionIdleTimeoutMs is 60000)'],
    ['sessions.maxPerPrincipal above the policy', { policy: small, servers: {}, sessions: { maxPerPrincipal: 3 } }, 'sessions.maxPerPrincipal: exceeds the policy limit (policy limits.maxSessionsPerPrincipal is 2)'],
    ['sessions.initializePerMinute above the policy', { policy: small, servers: {}, sessions: { initializePerMinute: 6 } }, 'sessions.initializePerMinute: exceeds the policy limit (policy limits.initializePerMinute is 5)'],
    ['sessions.maxChildrenPerServer above the policy', { policy: small, servers: {}, sessions: { maxChildrenPerServer: 4 } }, 'sessions.maxChildrenPerServer: exceeds the policy limit (policy limits.maxSessionChildrenPerServer is 3)'],
    ['limits.maxBodyBytes above the policy', { policy: small, servers: {}, limits: { maxBodyBytes: 4096 } }, 'limits.maxBodyBytes: exceeds the policy limit (policy limits.maxBodyBytes is 2048)'],
    ['limits.maxJsonDepth above the policy', { policy: small, servers: {}, limits: { maxJsonDepth: 9 } }, 'limits.maxJsonDepth: exceeds the policy limit (policy limits.maxJsonDepth is 8)'],
    ['limits.maxHeaderBytes above the policy', { policy: small, servers: {}, limits: { maxHeaderBytes: 8192 } }, 'limits.maxHeaderBytes: exceeds the policy limit (policy limits.maxHeaderBytes is 4096)'],
    ['limits.maxUpstreamMessageBytes above the policy', { policy: small, servers: {}, limits: { maxUpstreamMessageBytes: 4097 } }, 'limits.maxUpstreamMessageBytes: exceeds the policy limit (policy limits.maxUpstreamMessageBytes is 4096)'],
    ['eventStore.maxSessionBytes above the policy', { policy: small, servers: {}, eventStore: { maxSessionBytes: 8193 } }, 'eventStore.maxSessionBytes: exceeds the policy limit (policy limits.maxSessionHistoryBytes is 8192)'],
    ['eventStore.maxTotalBytes above the policy', { policy: small, servers: {}, eventStore: { maxTotalBytes: 16_385 } }, 'eventStore.maxTotalBytes: exceeds the policy limit (policy limits.maxHistoryBytes is 16384)'],
    ['sessions.max above the default policy', { servers: {}, sessions: { max: 5000 } }, 'sessions.max: exceeds the policy limit (policy limits.maxSessions is 1000)'],
  ];
  it.each(cases)('refuses %s', (_what, raw, problem) => {
    const problems = problemsOf(raw);
    expect(problems).toContain(problem);
    for (const p of problems) {
      for (const secret of [SECRET_URL, SECRET_COMMAND, SECRET_VALUE, 's3cr3t', 'proxy.example']) expect(p).not.toContain(secret);
    }
  });

  it('reports every widening attempt at once', () => {
    const problems = problemsOf({
      policy: 'strict',
      servers: {
        a: http({ allowPrivateNetwork: true, envHeaders: { Authorization: 'DOCS_TOKEN' } }),
        b: stdio({ env: { NODE_OPTIONS: SECRET_VALUE, PATH: '/tmp' } }),
      },
      sessions: { max: 500 },
    });
    expect(problems).toEqual([
      'servers.a.allowPrivateNetwork: the policy does not allow private-network upstreams',
      "servers.a.url: host is not in the policy's upstreamHosts",
      'servers.a.envHeaders.Authorization: the policy does not allow reading this variable',
      'servers.b.env.NODE_OPTIONS: the policy forbids setting this variable',
      'servers.b.env.PATH: the policy forbids setting this variable',
      'sessions.max: exceeds the policy limit (policy limits.maxSessions is 200)',
    ]);
  });

  it('checks the valid entries of an otherwise invalid config against the policy too', () => {
    const problems = problemsOf({ servers: { good: stdio({ env: { BASH_ENV: SECRET_VALUE } }), bad: { transport: 'ftp' } } });
    expect(problems).toContain('servers.good.env.BASH_ENV: the policy forbids setting this variable');
  });

  it('refuses a policy reference that is not a string', () => {
    expect(problemsOf({ policy: 42, servers: {} })[0]).toMatch(/^policy: /);
  });
});
