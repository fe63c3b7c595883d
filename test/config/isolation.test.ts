/**
 * `isolation` is a closed set: `session` (default), `shared`, `principal`. Anything else is a
 * configuration error naming the server and the field, never a silent fallback.
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
  it('defaults to "session"', () => expect(parseConfig(stdio()).servers.notes!.isolation).toBe('session'));
  it('refuses an unknown kind, naming server and field', () => {
    const problems = problemsOf(stdio('pooled'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^servers\.notes\.isolation: /);
  });
});
