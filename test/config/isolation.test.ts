/**
 * `isolation` is a closed set: `principal` (default), `session` (the default of a `perUser`
 * server), `shared`. Anything else is a configuration error naming the server and the field,
 * never a silent fallback (docs/decisions.md, "Two wire decisions of the relay core").
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const stdio = (isolation?: unknown) => ({
  servers: { notes: { transport: 'stdio', command: 'node', args: ['server.js'], ...(isolation === undefined ? {} : { isolation }) } },
});

function problemsOf(input: unknown): string[] {
  try {
    parseConfig(input);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('isolation', () => {
  for (const isolation of ['session', 'shared', 'principal'] as const) {
    it(`accepts "${isolation}"`, () => expect(parseConfig(stdio(isolation)).servers.notes!.isolation).toBe(isolation));
  }
  it('defaults to "principal" for every transport', () => {
    expect(parseConfig(stdio()).servers.notes!.isolation).toBe('principal');
    const remote = parseConfig({
      servers: {
        web: { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp' },
        old: { transport: 'sse', url: 'https://mcp.example.com/sse' },
        either: { transport: 'auto', url: 'https://mcp.example.com/any' },
        app: { transport: 'streamableHttp', url: 'https://app.example.com/mcp', upstreamAuth: { kind: 'clientCredentials', tokenUrl: 'https://auth.example.com/token', clientId: 'gw', clientSecretEnv: 'GW_SECRET' } },
      },
    }).servers;
    expect([remote.web!.isolation, remote.old!.isolation, remote.either!.isolation, remote.app!.isolation]).toEqual(['principal', 'principal', 'principal', 'principal']);
  });
  it('defaults to "session" for a perUser server, whose tokens are held per session', () => {
    const servers = parseConfig({ servers: { mine: { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp', upstreamAuth: { kind: 'perUser' } } } }).servers;
    expect(servers.mine!.isolation).toBe('session');
  });
  it('refuses a perUser server named "principal" or "shared", naming server and field', () => {
    for (const isolation of ['principal', 'shared']) {
      const problems = problemsOf({ servers: { mine: { transport: 'streamableHttp', url: 'https://mcp.example.com/mcp', isolation, upstreamAuth: { kind: 'perUser' } } } });
      expect(problems).toEqual([expect.stringMatching(/^servers\.mine\.upstreamAuth: per-user credentials need isolation "session"/)]);
    }
  });
  it('refuses an unknown kind, naming server and field', () => {
    const problems = problemsOf(stdio('pooled'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^servers\.notes\.isolation: /);
  });
});
