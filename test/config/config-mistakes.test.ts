/**
 * The config mistakes a newcomer makes first, answered with what failed and what to do: a config
 * path that does not exist is named (resolved, so the operator sees where it was looked for),
 * and a misspelt key gets the key the schema takes at that place ("did you mean").
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { closestKey, editDistance, keysAt } from '../../src/config/key-suggestions.js';
import { gatewayConfigSchema } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import { assertBuilt, CLI_JS } from '../integration/harness/paths.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'portcullis-mistakes-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function problemsOf(raw: unknown): string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('a misspelt key', () => {
  it.each([
    [{ sever: {} }, 'config: Unrecognized key: "sever"; did you mean "servers"?'],
    [{ servers: {}, Listen: {} }, 'config: Unrecognized key: "Listen"; did you mean "listen"?'],
    [{ servers: {}, listen: { prot: 1 } }, 'listen: Unrecognized key: "prot"; did you mean "port"?'],
    [{ servers: { a: { command: 'x', arg: [] } } }, 'servers.a: Unrecognized key: "arg"; did you mean "args"?'],
    [{ servers: { a: { transport: 'streamableHttp', url: 'https://mcp.example/mcp', haeders: {} } } }, 'servers.a: Unrecognized key: "haeders"; did you mean "headers"?'],
    [{ mcpServer: {} }, 'config: Unrecognized key: "mcpServer"; did you mean "mcpServers"?'],
  ])('%j gets the key the schema takes there', (raw, problem) => {
    expect(problemsOf(raw)).toContain(problem);
  });

  it('gets no guess when nothing is close, and one guess per key when several are unknown', () => {
    expect(problemsOf({ servers: {}, telemetryz: 1, qqqqq: 2 })).toContain('config: Unrecognized keys: "telemetryz", "qqqqq"');
    expect(problemsOf({ servers: {}, sesions: {}, lisen: {} })).toContain(
      'config: Unrecognized keys: "sesions", "lisen"; did you mean "sessions" (for "sesions"), "listen" (for "lisen")?',
    );
  });

  it('is compared with the keys the zod schema itself has at that place', () => {
    expect(keysAt(gatewayConfigSchema, [])).toEqual(expect.arrayContaining(['servers', 'listen', 'policy', 'sessions']));
    expect(keysAt(gatewayConfigSchema, ['listen'])).toEqual(expect.arrayContaining(['host', 'port', 'path']));
    expect(keysAt(gatewayConfigSchema, ['servers', 'any'])).toEqual(expect.arrayContaining(['command', 'args', 'url', 'headers', 'transport']));
    expect(editDistance('sever', 'servers')).toBe(2);
    expect(editDistance('lsiten', 'listen')).toBe(1);
    expect(closestKey('x'.repeat(1000), ['servers'])).toBeUndefined();
  });
});

describe('a config path that cannot be read', () => {
  it('is named, resolved, with the reason, for start and check alike', () => {
    assertBuilt();
    for (const args of [['--config', 'no-such-gateway.json'], ['check', '--config', 'no-such-gateway.json']]) {
      const run = spawnSync(process.execPath, [CLI_JS, ...args], { cwd: dir, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH } });
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(`portcullis: cannot read config file ${join(dir, 'no-such-gateway.json')} (ENOENT: no such file)\n`);
    }
    writeFileSync(join(dir, 'gateway.json'), '{ "servers": {} }');
    const directory = spawnSync(process.execPath, [CLI_JS, 'check', '--config', dir], { cwd: dir, encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH } });
    expect(directory.stderr).toBe(`portcullis: cannot read config file ${dir} (EISDIR: a directory, not a file)\n`);
  });
});
