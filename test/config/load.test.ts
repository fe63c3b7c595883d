import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile, parseConfig } from '../../src/config/load.js';
import { serverNameSchema } from '../../src/config/server-schema.js';
import { ConfigError } from '../../src/errors.js';

const SECRET_COMMAND = '/opt/secret-tools/bin/run-with-token-s3cr3t';
const SECRET_URL = 'https://mcp.internal.example.com/mcp?token=s3cr3t-url-token';
const SECRET_HEADER = 'Bearer s3cr3t-header-value';

function problemsOf(raw: unknown): string[] {
  try {
    parseConfig(raw);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('parseConfig: valid configurations', () => {
  it('fills defaults for a minimal stdio server', () => {
    const config = parseConfig({ servers: { files: { transport: 'stdio', command: 'node' } } });
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 8787, path: '/mcp' });
    expect(config.catalogue.separator).toBe('__');
    const files = config.servers.files!;
    expect(files).toMatchObject({ transport: 'stdio', args: [], env: {}, framing: 'auto', mode: 'required', isolation: 'principal' });
  });

  it('accepts a Streamable HTTP server with headers and envHeaders', () => {
    const config = parseConfig({
      servers: {
        docs: { transport: 'streamableHttp', url: 'https://docs.example.com/mcp', headers: { 'X-Team': 'core' }, envHeaders: { Authorization: 'DOCS_TOKEN' } },
      },
    });
    expect(config.servers.docs).toMatchObject({ transport: 'streamableHttp', allowPrivateNetwork: false, mode: 'required' });
  });

  it('imports Claude Desktop style mcpServers blocks', () => {
    const config = parseConfig({
      mcpServers: { fs: { command: 'npx', args: ['-y', 'x'] }, remote: { url: 'https://example.com/mcp' } },
    });
    expect(config.servers.fs?.transport).toBe('stdio');
    expect(config.servers.remote?.transport).toBe('streamableHttp');
  });

  it('imports VS Code style entries with a type field', () => {
    const config = parseConfig({ servers: { a: { type: 'stdio', command: 'node' }, b: { type: 'http', url: 'http://127.0.0.1:9/mcp' } } });
    expect(config.servers.a?.transport).toBe('stdio');
    expect(config.servers.b?.transport).toBe('streamableHttp');
  });

  it('imports a type "sse" entry as an sse server, with the same fields as Streamable HTTP', () => {
    const config = parseConfig({
      mcpServers: { old: { type: 'sse', url: 'https://mcp.example.com/sse', headers: { 'X-Team': 'core' }, envHeaders: { Authorization: 'OLD_TOKEN' } } },
    });
    expect(config.servers.old).toMatchObject({ transport: 'sse', url: 'https://mcp.example.com/sse', allowPrivateNetwork: false, connectTimeoutMs: 10_000 });
  });

  it('holds sse URLs to the same rule as any HTTP upstream (https, or http to loopback)', () => {
    expect(() => parseConfig({ servers: { old: { transport: 'sse', url: 'http://mcp.example.com/sse' } } })).toThrow(/servers\.old\.url: /);
  });

  it('turns namespacing off with a null separator', () => {
    expect(parseConfig({ servers: {}, catalogue: { separator: null } }).catalogue.separator).toBeNull();
  });

  it('returns a deeply frozen object', () => {
    const config = parseConfig({ servers: { a: { transport: 'stdio', command: 'node', args: ['x'] } } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.servers.a)).toBe(true);
    expect(Object.isFrozen((config.servers.a as { args: string[] }).args)).toBe(true);
  });
});

describe('parseConfig: diagnostics', () => {
  const cases: Array<{ name: string; raw: unknown; expected: RegExp }> = [
    {
      name: 'an unknown transport',
      raw: { servers: { x: { transport: 'websocket', url: SECRET_URL } } },
      expected: /servers\.x\.transport/,
    },
    {
      name: 'both command and url',
      raw: { mcpServers: { both: { command: SECRET_COMMAND, url: SECRET_URL } } },
      expected: /servers\.both: has both "command" and "url"/,
    },
    { name: 'neither command nor url', raw: { mcpServers: { empty: { args: ['a'] } } }, expected: /servers\.empty: needs "command"/ },
    {
      name: 'an unknown key in a server',
      raw: { servers: { x: { transport: 'stdio', command: SECRET_COMMAND, shell: true } } },
      expected: /servers\.x.*shell/,
    },
    { name: 'an unknown top-level key', raw: { servers: {}, plugins2: [] }, expected: /plugins2/ },
    {
      name: 'a url on the wrong transport',
      raw: { servers: { x: { transport: 'stdio', command: SECRET_COMMAND, url: SECRET_URL } } },
      expected: /servers\.x.*url/,
    },
    {
      name: 'plain http to a non-loopback host',
      raw: { servers: { x: { transport: 'streamableHttp', url: 'http://mcp.internal.example.com/s3cr3t-path' } } },
      expected: /servers\.x\.url: .*https/,
    },
    {
      name: 'credentials in the url',
      raw: { servers: { x: { transport: 'streamableHttp', url: 'https://user:s3cr3t-password@example.com/mcp' } } },
      expected: /servers\.x\.url: .*credentials/,
    },
    {
      name: 'a header value with a newline',
      raw: { servers: { x: { transport: 'streamableHttp', url: SECRET_URL, headers: { Authorization: `${SECRET_HEADER}\r\nX-Evil: 1` } } } },
      expected: /servers\.x\.headers\.Authorization: value contains CR, LF or NUL/,
    },
    {
      name: 'a header value of the wrong type',
      raw: { servers: { x: { transport: 'streamableHttp', url: SECRET_URL, headers: { Authorization: 42 } } } },
      expected: /servers\.x\.headers\.Authorization/,
    },
    { name: 'a bad framing value', raw: { servers: { x: { transport: 'stdio', command: SECRET_COMMAND, framing: 'xml' } } }, expected: /servers\.x\.framing/ },
    { name: 'a bad server name', raw: { servers: { 'bad name/..': { transport: 'stdio', command: 'node' } } }, expected: /servers/ },
    { name: 'a bad port', raw: { servers: {}, listen: { port: 70000 } }, expected: /listen\.port/ },
    { name: 'servers and mcpServers together', raw: { servers: {}, mcpServers: {} }, expected: /either "servers" or "mcpServers"/ },
    { name: 'missing servers', raw: {}, expected: /servers/ },
  ];

  for (const { name, raw, expected } of cases) {
    it(`reports ${name} naming the server and field, without echoing secrets`, () => {
      const problems = problemsOf(raw);
      expect(problems.length).toBeGreaterThan(0);
      const text = problems.join('\n');
      expect(text).toMatch(expected);
      for (const secret of ['s3cr3t', SECRET_COMMAND, SECRET_URL, SECRET_HEADER, 'mcp.internal.example.com']) {
        expect(text).not.toContain(secret);
      }
    });
  }

  it('lists every problem, not just the first', () => {
    const problems = problemsOf({
      servers: { a: { transport: 'stdio', command: 'node', framing: 'xml' }, b: { transport: 'streamableHttp', url: 'ftp://x' } },
    });
    expect(problems.length).toBeGreaterThanOrEqual(2);
  });
});

describe('parseConfig: the transport diagnostic', () => {
  it('names servers.<name>.transport once, whether zod reports the entry or its transport key', () => {
    const problems = [...problemsOf({ servers: { a: { transport: { nested: true }, command: 'x' } } }), ...problemsOf({ servers: { b: { transport: 'carrier-pigeon' } } })];
    expect(problems).toContain('servers.a.transport: must be "stdio", "streamableHttp" or "sse"');
    expect(problems).toContain('servers.b.transport: must be "stdio", "streamableHttp" or "sse"');
    expect(problems.join('\n')).not.toContain('transport.transport');
  });
});


describe('server names every JavaScript object already has', () => {
  const RESERVED = /is a name every JavaScript object already has .* rename the server/;

  /** The problems of loading `text` as a config file from disk, as an operator would. */
  async function fileProblems(text: string): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-names-'));
    try {
      const file = join(dir, 'portcullis.json');
      writeFileSync(file, text);
      await loadConfigFile(file);
    } catch (error) {
      if (error instanceof ConfigError) return [...error.problems];
      throw error;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return [];
  }

  it.each([
    ['servers', '{ "servers": { "__proto__": { "command": "node" }, "notes": { "command": "node" } } }'],
    ['mcpServers', '{ "mcpServers": { "__proto__": { "command": "node" } } }'],
    ['servers, the key spelt with escapes', '{ "servers": { "\\u005f_pr\\u006fto__": { "transport": "stdio", "command": "node" } } }'],
  ])('refuses a server named __proto__ in a file (%s) instead of losing it, naming it', async (_where, text) => {
    const problems = await fileProblems(text);
    expect(problems).toEqual([expect.stringMatching(/^(servers|mcpServers)\.__proto__: /)]);
    expect(problems[0]).toMatch(RESERVED);
  });

  it('refuses a __proto__ key anywhere else in a file, naming where', async () => {
    const problems = await fileProblems('{ "servers": { "notes": { "command": "node", "env": { "__proto__": "x" } } } }');
    expect(problems).toEqual([expect.stringMatching(/^servers\.notes\.env\.__proto__: "__proto__" cannot be a key .*rename or remove it$/)]);
  });

  it('refuses a server named __proto__ in a config given as an object (JSON.parse keeps the key)', () => {
    const raw = JSON.parse('{ "servers": { "__proto__": { "transport": "stdio", "command": "node" }, "notes": { "transport": "stdio", "command": "node" } } }') as unknown;
    expect(problemsOf(raw)).toEqual([expect.stringMatching(/^servers\.__proto__: /)]);
  });

  it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf'])('refuses a server named %s, naming it', (name) => {
    for (const raw of [{ servers: { [name]: { transport: 'stdio', command: 'node' } } }, { mcpServers: { [name]: { command: 'node' } } }]) {
      const problems = problemsOf(raw);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(new RegExp(`^servers\\.${name}: `));
      expect(problems[0]).toMatch(RESERVED);
    }
  });

  it('refuses such a name wherever a server is named (plugins and session-brought servers share the schema)', () => {
    expect(serverNameSchema.safeParse('constructor').success).toBe(false);
    expect(serverNameSchema.safeParse('toString').success).toBe(false);
  });

  it('still takes names that only resemble them', () => {
    const config = parseConfig({ servers: { proto: { transport: 'stdio', command: 'node' }, constructors: { transport: 'stdio', command: 'node' }, 'Constructor': { transport: 'stdio', command: 'node' } } });
    expect(Object.keys(config.servers).sort()).toEqual(['Constructor', 'constructors', 'proto']);
  });
});
