/**
 * The pure parts behind agents and init options: the allowlist predicate, the closed options
 * schema, the policy and config bounds, the canonical URLs and the persona heading.
 */
import { describe, expect, it } from 'vitest';
import { gatewayText } from '../../src/catalogue/persona.js';
import { canonicalUrls } from '../../src/inbound/announced-server.js';
import { boundOptions } from '../../src/inbound/init-options-reader.js';
import { compileAgentTools } from '../../src/policy/agent-tools.js';
import { DEPLOY_ONLY_KEYS, MAX_PERSONA_CHARS, readInitOptions } from '../../src/rpc/init-options.js';

describe('an agent allowlist', () => {
  const cases: Array<[string, readonly string[] | undefined, [string, string, string], boolean]> = [
    ['absent allows everything', undefined, ['notes', 'add', 'notes__add'], true],
    ['empty allows everything', [], ['notes', 'add', 'notes__add'], true],
    ['an exposed name', ['notes__add'], ['notes', 'add', 'notes__add'], true],
    ['an exposed name, another tool', ['notes__add'], ['notes', 'list', 'notes__list'], false],
    ['the Claude Code form', ['mcp__notes__add'], ['notes', 'add', 'notes__add'], true],
    ['the Claude Code form on the upstream name, not the exposed one', ['mcp__notes__add'], ['notes', 'add', 'n__add_3f2a'], true],
    ['the Claude Code form of another server', ['mcp__other__add'], ['notes', 'add', 'notes__add'], false],
    ['a server glob', ['notes__*'], ['notes', 'anything', 'notes__anything'], true],
    ['a server glob holds whatever the separator', ['notes__*'], ['notes', 'anything', 'notes.anything'], true],
    ['a server glob of another server', ['notes__*'], ['notesx', 'a', 'notesx__a'], false],
    ['a plugin server by exposed prefix', ['dice-kit.*'], ['dice-kit.dice', 'roll', 'dice-kit.dice__roll'], true],
    ['an exact name is not a prefix', ['notes__ad'], ['notes', 'add', 'notes__add'], false],
    ['a plugin glob stops at its namespace: not a plugin named after it plus a dot', ['dice-kit.*'], ['dice-kit.evil.x', 'roll', 'dice-kit.evil.x__roll'], false],
    ['a partial plugin-server prefix stays inside the plugin', ['dice-kit.di*'], ['dice-kit.dix.evil', 'roll', 'dice-kit.dix.evil__roll'], false],
    ['a partial plugin-server prefix matches its own servers', ['dice-kit.di*'], ['dice-kit.dice', 'roll', 'dice-kit.dice__roll'], true],
    ['a server-name prefix does not reach into a plugin namespace', ['dice-kit*'], ['dice-kit.dice', 'roll', 'dice-kit.dice__roll'], false],
    ['a tool prefix within one server', ['notes__get_*'], ['notes', 'get_one', 'notes__get_one'], true],
    ['a tool prefix within one server, another tool', ['notes__get_*'], ['notes', 'put_one', 'notes__put_one'], false],
    ['a tool prefix is not a prefix of a longer server name', ['notes__*'], ['notes__x', 'a', 'notes__x__a'], false],
    ['a lone * allows every tool', ['*'], ['dice-kit.evil.x', 'roll', 'dice-kit.evil.x__roll'], true],
  ];
  it.each(cases)('%s', (_what, tools, [server, name, exposed], allowed) => {
    expect(compileAgentTools(tools)(server, name, exposed)).toBe(allowed);
  });
});

describe('the init options schema', () => {
  it('reads no options from a request without the key', () => {
    expect(readInitOptions(undefined)).toMatchObject({ ok: true, options: {} });
    expect(readInitOptions({ progressToken: 1 })).toMatchObject({ ok: true, options: {} });
  });

  it('reads the four options', () => {
    const read = readInitOptions({ 'portcullis/options': { dataMode: 'tools', agentPersona: 'p', eventStoreLimit: 9, deferTools: true } });
    expect(read).toEqual({ ok: true, options: { dataMode: 'tools', agentPersona: 'p', eventStoreLimit: 9, deferTools: true }, deployOnly: [], unknown: [] });
  });

  it('names deploy-only and unknown keys apart and keeps none of their values', () => {
    const read = readInitOptions({ 'portcullis/options': { host: 'x', limits: { secret: 'v' }, colour: 'blue' } });
    expect(read).toEqual({ ok: true, options: {}, deployOnly: ['host', 'limits'], unknown: ['colour'] });
    expect(JSON.stringify(read)).not.toContain('secret');
  });

  it('keeps a few short unknown names only', () => {
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${'k'.repeat(100)}${i}`, i]));
    const read = readInitOptions({ 'portcullis/options': many });
    expect(read.ok && read.unknown.length).toBe(16);
    expect(read.ok && read.unknown.every((name) => name.length <= 65)).toBe(true);
  });

  it.each([
    [{ dataMode: 'files' }, 'dataMode'],
    [{ agentPersona: '' }, 'agentPersona'],
    [{ agentPersona: 'x'.repeat(MAX_PERSONA_CHARS + 1) }, 'agentPersona'],
    [{ eventStoreLimit: -1 }, 'eventStoreLimit'],
    [{ eventStoreLimit: '5' }, 'eventStoreLimit'],
    [{ deferTools: 1 }, 'deferTools'],
  ])('refuses %j naming %s', (options, key) => {
    const read = readInitOptions({ 'portcullis/options': options });
    expect(read).toMatchObject({ ok: false, key });
    expect(!read.ok && read.message).toContain(`.${key} `);
  });

  it('refuses options that are not an object', () => {
    for (const value of [[], 'x', null, 3]) expect(readInitOptions({ 'portcullis/options': value }).ok).toBe(false);
  });

  it('lists the listener and every policy key as deploy-only', () => {
    expect(DEPLOY_ONLY_KEYS).toEqual(expect.arrayContaining(['host', 'port', 'allowedHosts', 'allowedOrigins', 'acknowledgedNoAuth', 'deniedTools', 'limits']));
  });
});

describe('the bounds on init options', () => {
  const bounds = { persona: { allowed: true, maxChars: 3 }, eventStoreLimit: 100 };

  it('counts a persona in characters, not UTF-16 units', () => {
    expect(boundOptions({ agentPersona: '😀😀😀' }, bounds).ok).toBe(true);
    expect(boundOptions({ agentPersona: '😀😀😀😀' }, bounds)).toMatchObject({ ok: false, message: expect.stringContaining('at most 3 characters') });
  });

  it('refuses every persona where the policy forbids them', () => {
    expect(boundOptions({ agentPersona: 'a' }, { ...bounds, persona: { allowed: false, maxChars: 3 } }).ok).toBe(false);
    expect(boundOptions({}, { ...bounds, persona: { allowed: false, maxChars: 3 } }).ok).toBe(true);
  });

  it("lowers eventStoreLimit to the config's, and keeps a lower one", () => {
    expect(boundOptions({ eventStoreLimit: 1_000 }, bounds)).toEqual({ ok: true, options: { eventStoreLimit: 100 } });
    expect(boundOptions({ eventStoreLimit: 7 }, bounds)).toEqual({ ok: true, options: { eventStoreLimit: 7 } });
  });
});

describe('canonical URLs', () => {
  const v4 = { address: '127.0.0.1', family: 'IPv4', port: 8787 };
  it('derive from the bound address', () => {
    const urls = canonicalUrls({ path: '/mcp' }, v4);
    expect(urls.aggregate).toBe('http://127.0.0.1:8787/mcp');
    expect(urls.agent('dice-kit:game-master')).toBe('http://127.0.0.1:8787/mcp/agents/dice-kit:game-master');
    expect(urls.sideChannel('a/b')).toBe('http://127.0.0.1:8787/mcp/servers/a%2Fb');
  });

  it('bracket IPv6 and keep a root path', () => {
    const urls = canonicalUrls({ path: '/' }, { address: '::1', family: 'IPv6', port: 1 });
    expect(urls.aggregate).toBe('http://[::1]:1/');
    expect(urls.agent('x')).toBe('http://[::1]:1/agents/x');
  });

  it('prefer the listen.publicUrl origin, before the path', () => {
    expect(canonicalUrls({ path: '/mcp', publicUrl: 'https://gw.example.com' }, v4).sideChannel('notes')).toBe('https://gw.example.com/mcp/servers/notes');
    expect(canonicalUrls({ path: '/mcp', publicUrl: 'https://gw.example.com/' }, v4).aggregate).toBe('https://gw.example.com/mcp');
  });
});

describe('the persona heading', () => {
  it('labels the persona and puts it first', () => {
    expect(gatewayText(' Be brief. ', 'Notes.')).toBe('## Persona\nBe brief.\n\nNotes.');
    expect(gatewayText(undefined, 'Notes.')).toBe('Notes.');
    expect(gatewayText('  ', undefined)).toBeUndefined();
  });
});
