import { describe, expect, it } from 'vitest';
import { placeholdersFor } from '../../src/plugins/placeholders.js';
import { checkServerEntry, type EntryShape } from '../../src/plugins/server-entry.js';

const standard = placeholdersFor('agent-plugins');
const check = (raw: unknown, shape: EntryShape = 'agent-plugins') => checkServerEntry(raw, shape, standard);

describe('Agent Plugins server entries: a closed union on type', () => {
  it('accepts each variant with its own fields', () => {
    expect(check({ type: 'stdio', command: 'node', args: ['a'], env: { A: 'b' }, cwd: './x' })).toEqual({
      ok: true,
      entry: { type: 'stdio', command: 'node', args: ['a'], env: [['A', 'b']], cwd: './x' },
    });
    expect(check({ type: 'streamable-http', url: 'https://h/mcp', headers: { 'X-A': 'b' } })).toEqual({
      ok: true,
      entry: { type: 'streamable-http', url: 'https://h/mcp', headers: [['X-A', 'b']] },
    });
    expect(check({ type: 'sse', url: 'https://h/sse' })).toMatchObject({ ok: true, entry: { type: 'sse' } });
  });

  it.each([
    ['a missing type', { command: 'node' }, 'type'],
    ['an unknown type', { type: 'websocket', url: 'wss://h' }, 'type'],
    ['the desktop spelling "http"', { type: 'http', url: 'https://h' }, 'type'],
    ['another variant field', { type: 'stdio', command: 'node', url: 'https://h' }, '"url"'],
    ['an unknown field', { type: 'streamable-http', url: 'https://h', oauth: {} }, '"oauth"'],
    ['a missing command', { type: 'stdio' }, 'command'],
    ['a command with arguments', { type: 'stdio', command: 'npx -y pkg' }, 'command'],
    ['a ../ command', { type: 'stdio', command: '../bin/x' }, 'command'],
    ['an absolute command', { type: 'stdio', command: '/usr/bin/node' }, 'command'],
    ['a command with a placeholder', { type: 'stdio', command: '${PLUGIN_ROOT}/bin/x' }, 'command'],
    ['a bare "./"', { type: 'stdio', command: './' }, 'command'],
    ['non-string args', { type: 'stdio', command: 'node', args: [1] }, 'args'],
    ['args with NUL', { type: 'stdio', command: 'node', args: ['a\0b'] }, 'args'],
    ['too many args', { type: 'stdio', command: 'node', args: Array(257).fill('a') }, 'args'],
    ['env naming PLUGIN_ROOT', { type: 'stdio', command: 'node', env: { PLUGIN_ROOT: '/etc' } }, 'env.PLUGIN_ROOT'],
    ['env naming PLUGIN_DATA', { type: 'stdio', command: 'node', env: { PLUGIN_DATA: '/tmp' } }, 'env.PLUGIN_DATA'],
    ['env with a bad name', { type: 'stdio', command: 'node', env: { 'A=B': 'x' } }, 'env'],
    ['env named __proto__', { type: 'stdio', command: 'node', env: JSON.parse('{"__proto__":"x"}') }, 'env'],
    ['a non-string env value', { type: 'stdio', command: 'node', env: { A: 1 } }, 'env.A'],
    ['a non-string cwd', { type: 'stdio', command: 'node', cwd: 1 }, 'cwd'],
    ['a url with userinfo', { type: 'streamable-http', url: 'https://u:p@h/mcp' }, 'url'],
    ['a url with a fragment', { type: 'streamable-http', url: 'https://h/mcp#x' }, 'url'],
    ['plain http off loopback', { type: 'sse', url: 'http://example.com/sse' }, 'url'],
    ['a non-http scheme', { type: 'streamable-http', url: 'ftp://h/mcp' }, 'url'],
    ['a relative url', { type: 'streamable-http', url: '/mcp' }, 'url'],
    ['a header with CRLF', { type: 'streamable-http', url: 'https://h', headers: { A: 'x\r\nB: y' } }, 'headers.A'],
    ['a bad header name', { type: 'streamable-http', url: 'https://h', headers: { 'A B': 'x' } }, 'headers'],
    ['the same header twice in two casings', { type: 'streamable-http', url: 'https://h', headers: { 'X-A': '1', 'x-a': '2' } }, 'headers.x-a'],
  ])('refuses %s, naming the field', (_label, raw, field) => {
    const result = check(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.field).toBe(field);
  });

  it('accepts http to localhost and loopback literals', () => {
    for (const url of ['http://localhost:1/mcp', 'http://127.0.0.1:1/mcp', 'http://[::1]:1/mcp']) {
      expect(check({ type: 'streamable-http', url }).ok).toBe(true);
    }
  });

  it('never echoes a value in a message', () => {
    const secret = 'hunter2-secret-value';
    const entries = [
      { type: 'streamable-http', url: `https://user:${secret}@h/mcp` },
      { type: 'streamable-http', url: `https://h/mcp#${secret}` },
      { type: 'streamable-http', url: `http://example.com/?t=${secret}` },
      { type: 'stdio', command: `${secret} --flag` },
      { type: 'stdio', command: 'node', env: { PLUGIN_ROOT: secret } },
      { type: 'streamable-http', url: 'https://h', headers: { A: `${secret}\n` } },
    ];
    for (const raw of entries) {
      const result = check(raw);
      expect(result.ok).toBe(false);
      expect(JSON.stringify(result)).not.toContain(secret);
    }
  });
});

describe('Claude Desktop-shaped entries (Open Plugins, Claude Code)', () => {
  it('infers stdio from command and streamable-http from url', () => {
    expect(check({ command: 'node', args: ['s.js'] }, 'desktop')).toMatchObject({ ok: true, entry: { type: 'stdio' } });
    expect(check({ url: 'https://h/mcp' }, 'desktop')).toMatchObject({ ok: true, entry: { type: 'streamable-http' } });
  });

  it('maps the type spellings of that format', () => {
    expect(check({ type: 'http', url: 'https://h' }, 'desktop')).toMatchObject({ ok: true, entry: { type: 'streamable-http' } });
    expect(check({ type: 'streamable-http', url: 'https://h' }, 'desktop')).toMatchObject({ ok: true, entry: { type: 'streamable-http' } });
    expect(check({ type: 'sse', url: 'https://h' }, 'desktop')).toMatchObject({ ok: true, entry: { type: 'sse' } });
    expect(check({ type: 'stdio', command: 'node' }, 'desktop')).toMatchObject({ ok: true, entry: { type: 'stdio' } });
  });

  it.each([
    ['both command and url', { command: 'node', url: 'https://h' }, undefined],
    ['neither command nor url', { args: [] }, undefined],
    ['an unknown type', { type: 'ws', url: 'wss://h' }, 'type'],
    ['an unknown field', { command: 'node', disabled: true }, '"disabled"'],
    ['a non-object entry', 'node server.js', undefined],
  ])('refuses %s', (_label, raw, field) => {
    const result = check(raw, 'desktop');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.field).toBe(field);
  });

  it('reserves the CLAUDE_ names too in the Claude Code layout', () => {
    const result = checkServerEntry({ command: 'node', env: { CLAUDE_PLUGIN_ROOT: '/x' } }, 'desktop', placeholdersFor('claude-code'));
    expect(result).toMatchObject({ ok: false, field: 'env.CLAUDE_PLUGIN_ROOT' });
  });
});
