import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EMBEDDED_DEFAULT_POLICY, loadPolicy, parsePolicy, shippedPolicyPath } from '../../src/policy/policy-load.js';
import { policySchema } from '../../src/policy/policy-schema.js';

const POLICIES = fileURLToPath(new URL('../../policies/', import.meta.url));

function readShipped(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(POLICIES, `${name}.json`), 'utf8')) as Record<string, unknown>;
}

function problemsOf(raw: unknown): string[] {
  const result = parsePolicy(raw);
  return result.ok ? [] : result.problems;
}

describe('the shipped policies', () => {
  it('keeps policies/default.json identical to the embedded default', () => {
    const { description: _description, ...fields } = readShipped('default');
    expect(fields).toEqual({ ...EMBEDDED_DEFAULT_POLICY });
  });

  it('parses policies/default.json to the embedded default', () => {
    const parsed = parsePolicy(readShipped('default'));
    expect(parsed.ok && { ...parsed.policy, description: undefined }).toEqual({ ...EMBEDDED_DEFAULT_POLICY, description: undefined });
  });

  it('parses policies/strict.json, and it is narrower than the default everywhere', () => {
    const parsed = parsePolicy(readShipped('strict'));
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const strict = parsed.policy;
    expect(strict.privateNetwork.allowServers).toBe(false);
    expect(strict.upstreamHosts).toEqual([]);
    expect(strict.envHeaderNames.allow).toEqual([]);
    expect(strict.allowedOrigins).toEqual([]);
    expect(strict.acknowledgedNoAuth).toBe(false);
    expect(strict.legacySse).toEqual({ inbound: false, upstream: false });
    for (const name of EMBEDDED_DEFAULT_POLICY.stdioDeniedEnv) expect(strict.stdioDeniedEnv).toContain(name);
    for (const name of EMBEDDED_DEFAULT_POLICY.envHeaderNames.deny) expect(strict.envHeaderNames.deny).toContain(name);
    for (const [key, value] of Object.entries(strict.limits)) {
      expect(value).toBeLessThanOrEqual(EMBEDDED_DEFAULT_POLICY.limits[key as keyof typeof strict.limits]);
    }
  });

  it('finds shipped policies from the source tree', () => {
    expect(shippedPolicyPath('strict')).toBe(join(POLICIES, 'strict.json'));
    expect(shippedPolicyPath('lenient')).toBeUndefined();
  });
});

describe('the embedded default policy', () => {
  it('is loopback only, private networks by per-server opt-in, strict limits', () => {
    expect(EMBEDDED_DEFAULT_POLICY).toMatchObject({
      acknowledgedNoAuth: false,
      allowedHosts: ['127.0.0.1', 'localhost', '[::1]'],
      allowedOrigins: null,
      privateNetwork: { allowServers: true },
      legacySse: { inbound: true, upstream: true },
      deniedTools: [],
      limits: { maxBodyBytes: 1024 * 1024, maxJsonDepth: 64, maxSessions: 1000, sessionIdleTimeoutMs: 1_800_000, maxHeaderBytes: 16_384 },
    });
    expect(EMBEDDED_DEFAULT_POLICY.upstreamHosts).toBeUndefined();
  });

  it('is deeply frozen', () => {
    expect(Object.isFrozen(EMBEDDED_DEFAULT_POLICY)).toBe(true);
    expect(Object.isFrozen(EMBEDDED_DEFAULT_POLICY.allowedHosts)).toBe(true);
    expect(Object.isFrozen(EMBEDDED_DEFAULT_POLICY.limits)).toBe(true);
    expect(Object.isFrozen(EMBEDDED_DEFAULT_POLICY.envHeaderNames.deny)).toBe(true);
  });

  it('is what an empty policy file means', () => {
    expect(policySchema.parse({})).toEqual({ ...EMBEDDED_DEFAULT_POLICY });
  });
});

describe('parsePolicy: valid policies', () => {
  const cases: Array<[string, unknown, (policy: Record<string, unknown>) => void]> = [
    ['a policy that only denies tools keeps every other default', { deniedTools: ['*__delete_*'] }, (p) => {
      expect(p.deniedTools).toEqual(['*__delete_*']);
      expect(p.stdioDeniedEnv).toEqual(EMBEDDED_DEFAULT_POLICY.stdioDeniedEnv);
    }],
    ['an explicit envHeaderNames.allow keeps the default deny list', { envHeaderNames: { allow: ['DOCS_TOKEN'] } }, (p) => {
      expect(p.envHeaderNames).toEqual({ allow: ['DOCS_TOKEN'], deny: EMBEDDED_DEFAULT_POLICY.envHeaderNames.deny });
    }],
    ['upstreamHosts are lower-cased', { upstreamHosts: ['Docs.Example.COM', '*.Corp.Example', '10.0.0.5', '[fd00::1]'] }, (p) => {
      expect(p.upstreamHosts).toEqual(['docs.example.com', '*.corp.example', '10.0.0.5', '[fd00::1]']);
    }],
    ['allowedOrigins lists canonical origins and "null"', { allowedOrigins: ['https://app.example.com', 'http://localhost:3000', 'null'] }, (p) => {
      expect(p.allowedOrigins).toHaveLength(3);
    }],
    ['an empty allowedOrigins admits no browser page', { allowedOrigins: [] }, (p) => expect(p.allowedOrigins).toEqual([])],
    ['partial limits keep the other defaults', { limits: { maxBodyBytes: 4096 } }, (p) => {
      expect(p.limits).toEqual({ ...EMBEDDED_DEFAULT_POLICY.limits, maxBodyBytes: 4096 });
    }],
    ['a description is allowed', { description: 'team policy' }, (p) => expect(p.description).toBe('team policy')],
  ];
  it.each(cases)('%s', (_what, raw, check) => {
    const result = parsePolicy(raw);
    if (!result.ok) throw new Error(result.problems.join('\n'));
    check(result.policy as unknown as Record<string, unknown>);
    expect(Object.isFrozen(result.policy)).toBe(true);
  });
});

describe('parsePolicy: invalid policies', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['an unknown field', { allowEverything: true }, /^policy: .*allowEverything/],
    ['a non-object', ['x'], /^policy: /],
    ['acknowledgedNoAuth as a string', { acknowledgedNoAuth: 'yes' }, /^policy\.acknowledgedNoAuth: /],
    ['an empty allowedHosts', { allowedHosts: [] }, /^policy\.allowedHosts: must list at least one host/],
    ['an allowedHosts entry with a port', { allowedHosts: ['localhost:8787'] }, /^policy\.allowedHosts\.0: must be a bare hostname/],
    ['an allowedHosts entry with a scheme', { allowedHosts: ['localhost', 'http://x'] }, /^policy\.allowedHosts\.1: /],
    ['a non-canonical origin', { allowedOrigins: ['http://localhost:80'] }, /^policy\.allowedOrigins\.0: must be a canonical origin/],
    ['an origin with a path', { allowedOrigins: ['https://app.example.com/'] }, /^policy\.allowedOrigins\.0: /],
    ['allowedOrigins as a string', { allowedOrigins: 'loopback' }, /^policy\.allowedOrigins: /],
    ['an unknown privateNetwork field', { privateNetwork: { allowServers: true, cidrs: [] } }, /^policy\.privateNetwork: /],
    ['an upstreamHosts entry with a scheme', { upstreamHosts: ['https://docs.example.com'] }, /^policy\.upstreamHosts\.0: must be a hostname/],
    ['an upstreamHosts entry with a port', { upstreamHosts: ['docs.example.com:443'] }, /^policy\.upstreamHosts\.0: /],
    ['a bare * in upstreamHosts', { upstreamHosts: ['*'] }, /^policy\.upstreamHosts\.0: /],
    ['a wildcard in the middle of a host', { upstreamHosts: ['docs.*.example.com'] }, /^policy\.upstreamHosts\.0: /],
    ['an invalid IPv6 literal', { upstreamHosts: ['[fd00::zz]'] }, /^policy\.upstreamHosts\.0: /],
    ['an empty deniedTools glob', { deniedTools: [''] }, /^policy\.deniedTools\.0: must be a non-empty glob/],
    ['an envHeaderNames glob with a space', { envHeaderNames: { deny: ['AWS KEY'] } }, /^policy\.envHeaderNames\.deny\.0: must be an environment variable name/],
    ['a stdioDeniedEnv entry with "="', { stdioDeniedEnv: ['A=B'] }, /^policy\.stdioDeniedEnv\.0: /],
    ['a zero body limit', { limits: { maxBodyBytes: 0 } }, /^policy\.limits\.maxBodyBytes: /],
    ['a fractional depth', { limits: { maxJsonDepth: 10.5 } }, /^policy\.limits\.maxJsonDepth: /],
    ['a depth beyond what JSON.stringify survives', { limits: { maxJsonDepth: 5000 } }, /^policy\.limits\.maxJsonDepth: /],
    ['an unknown limit', { limits: { maxStreams: 5 } }, /^policy\.limits: /],
  ];
  it.each(cases)('refuses %s', (_what, raw, pattern) => {
    const problems = problemsOf(raw);
    expect(problems.some((p) => pattern.test(p)), problems.join('\n')).toBe(true);
  });
});

describe('loadPolicy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-policy-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the embedded default for no reference and for "default"', () => {
    expect(loadPolicy(undefined, dir)).toEqual({ ok: true, policy: EMBEDDED_DEFAULT_POLICY });
    expect(loadPolicy('default', dir)).toEqual({ ok: true, policy: EMBEDDED_DEFAULT_POLICY });
  });

  it('loads the shipped strict policy by name', () => {
    const result = loadPolicy('strict', dir);
    expect(result.ok && result.policy.privateNetwork.allowServers).toBe(false);
  });

  it('loads a policy file relative to the base directory', () => {
    writeFileSync(join(dir, 'team.json'), JSON.stringify({ deniedTools: ['*__rm'] }));
    const result = loadPolicy('./team.json', dir);
    expect(result.ok && result.policy.deniedTools).toEqual(['*__rm']);
  });

  const failures: Array<[string, string, () => void, RegExp]> = [
    ['an unknown shipped name', 'lenient', () => undefined, /^policy: not a shipped policy \("default", "strict"\)/],
    ['a path that is not .json', './team.yaml', () => undefined, /^policy: must name a shipped policy or a path to a "\.json"/],
    ['a missing file', './missing.json', () => undefined, /^policy: cannot read the policy file \(ENOENT\)$/],
    ['a file that is not JSON', './broken.json', () => writeFileSync(join(dir, 'broken.json'), '{ nope'), /^policy: the policy file is not valid JSON$/],
    ['a file with an invalid field', './bad.json', () => writeFileSync(join(dir, 'bad.json'), '{"acknowledgedNoAuth": 1}'), /^policy\.acknowledgedNoAuth: /],
  ];
  it.each(failures)('reports %s without echoing the path', (_what, ref, setup, pattern) => {
    setup();
    const result = loadPolicy(ref, dir);
    if (result.ok) throw new Error('expected a problem');
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]).toMatch(pattern);
    expect(result.problems[0]).not.toContain(dir);
  });
});
