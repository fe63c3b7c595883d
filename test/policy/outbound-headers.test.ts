// Pure header building: nothing in this file opens a socket.
import { describe, expect, it } from 'vitest';
import { checkOutboundHeaderName, compileOutboundHeaders, type OutboundHeadersOptions } from '../../src/policy/outbound-headers.js';

const SECRET = 'sk-live-0123456789';
const noEnv = (): string | undefined => undefined;

function build(
  options: Partial<OutboundHeadersOptions>,
  incoming: Headers | Record<string, string>,
  env: Record<string, string> = {},
) {
  const builder = compileOutboundHeaders({ headers: {}, envHeaders: {}, ...options });
  return builder.build(incoming, (name) => env[name]);
}

describe('compileOutboundHeaders: what passes through from the transport request', () => {
  /** [incoming header, value, passed through?] */
  const cases: readonly (readonly [string, string, boolean])[] = [
    ['Content-Type', 'application/json', true],
    ['Accept', 'application/json, text/event-stream', true],
    ['MCP-Protocol-Version', '2025-11-25', true],
    ['Mcp-Session-Id', 'upstream-session-1', true],
    ['Last-Event-ID', 'stream-1:42', true],
    ['Mcp-Method', 'tools/call', true],
    ['Mcp-Name', 'search', true],
    ['Mcp-Param-Region', 'eu-west', true],
    ['Authorization', 'Bearer downstream-token', false],
    ['Cookie', 'sid=abc', false],
    ['X-Forwarded-For', '10.0.0.1', false],
    ['User-Agent', 'some-client', false],
    ['Origin', 'http://localhost', false],
    ['Connection', 'keep-alive', false],
    ['Keep-Alive', 'timeout=5', false],
    ['Proxy-Authorization', 'Basic abc', false],
    ['Proxy-Connection', 'keep-alive', false],
    ['TE', 'trailers', false],
    ['Trailer', 'x-checksum', false],
    ['Transfer-Encoding', 'chunked', false],
    ['Upgrade', 'websocket', false],
    ['Host', 'attacker.example', false],
    ['Content-Length', '12', false],
  ];

  it.each(cases)('%s → passed through: %s', (name, value, passed) => {
    for (const incoming of [new Headers({ [name]: value }), { [name]: value }]) {
      const { headers } = build({}, incoming);
      expect(headers[name.toLowerCase()]).toBe(passed ? value : undefined);
      expect(Object.keys(headers)).toHaveLength(passed ? 1 : 0);
    }
  });

  it('never passes the incoming Authorization through, even when config sets none', () => {
    const { headers } = build({ headers: { 'X-Team': 'core' } }, new Headers({ authorization: 'Bearer downstream', accept: 'application/json' }));
    expect(headers).toEqual({ 'x-team': 'core', accept: 'application/json' });
  });

  it('strips an allowlisted header that the incoming Connection header names', () => {
    const incoming = { Connection: 'close, Mcp-Session-Id', 'mcp-session-id': 'abc', accept: '*/*' };
    expect(build({}, incoming).headers).toEqual({ accept: '*/*' });
  });

  it('drops an incoming value with a control character instead of forwarding it', () => {
    expect(build({}, { 'last-event-id': 'a\r\nx-injected: 1' }).headers).toEqual({});
  });
});

describe('compileOutboundHeaders: configured and env-sourced headers', () => {
  it('injects configured headers under lower-case names', () => {
    const { headers, skipped } = build({ headers: { 'X-Team': 'core', 'X-Api-Key': SECRET } }, {});
    expect(headers).toEqual({ 'x-team': 'core', 'x-api-key': SECRET });
    expect(skipped).toEqual([]);
  });

  it('takes Authorization only from envHeaders, replacing whatever the transport sent', () => {
    const { headers } = build(
      { envHeaders: { Authorization: 'DOCS_TOKEN' } },
      new Headers({ authorization: 'Bearer downstream' }),
      { DOCS_TOKEN: `Bearer ${SECRET}` },
    );
    expect(headers).toEqual({ authorization: `Bearer ${SECRET}` });
  });

  it('lets an env-sourced value win over a configured one of the same name', () => {
    const { headers } = build({ headers: { 'X-Api-Key': 'fallback' }, envHeaders: { 'x-api-key': 'KEY' } }, {}, { KEY: SECRET });
    expect(headers['x-api-key']).toBe(SECRET);
  });

  it('reads the environment at build time, so a rotated secret is picked up', () => {
    const builder = compileOutboundHeaders({ headers: {}, envHeaders: { Authorization: 'TOKEN' } });
    const env: Record<string, string> = { TOKEN: 'one' };
    expect(builder.build({}, (n) => env[n]).headers.authorization).toBe('one');
    env.TOKEN = 'two';
    expect(builder.build({}, (n) => env[n]).headers.authorization).toBe('two');
  });

  /** [env value or undefined, allowed names, expected skip reason or null when injected] */
  const envCases: readonly (readonly [string, string | undefined, readonly string[] | undefined, string | null])[] = [
    ['set, any name allowed', SECRET, undefined, null],
    ['set, name allowed by policy', SECRET, ['TOKEN'], null],
    ['empty string is a value', '', undefined, null],
    ['tab inside the value', 'a\tb', undefined, null],
    ['unset', undefined, undefined, 'missing'],
    ['set, name not allowed by policy', SECRET, ['OTHER'], 'not-allowed'],
    ['unset, name not allowed by policy', undefined, [], 'not-allowed'],
    ['CR LF in the value', `${SECRET}\r\nx-evil: 1`, undefined, 'unsafe-value'],
    ['lone LF in the value', `${SECRET}\n`, undefined, 'unsafe-value'],
    ['NUL in the value', `${SECRET}\0`, undefined, 'unsafe-value'],
    ['other control character', `${SECRET}\x07`, undefined, 'unsafe-value'],
    ['character beyond Latin-1', `${SECRET}\u2028`, undefined, 'unsafe-value'],
  ];

  it.each(envCases)('env header: %s', (_label, value, allowedEnvNames, reason) => {
    const env: Record<string, string> = value === undefined ? {} : { TOKEN: value };
    const options: Partial<OutboundHeadersOptions> = { envHeaders: { 'X-Api-Key': 'TOKEN' } };
    if (allowedEnvNames !== undefined) options.allowedEnvNames = allowedEnvNames;
    const { headers, skipped } = build(options, {}, env);
    if (reason === null) {
      expect(headers).toEqual({ 'x-api-key': value });
      expect(skipped).toEqual([]);
    } else {
      expect(headers).toEqual({});
      expect(skipped).toEqual([{ header: 'x-api-key', variable: 'TOKEN', reason }]);
      // The refusal names header and variable only; the value never appears.
      expect(JSON.stringify(skipped)).not.toContain(SECRET);
      // Every built set is safe to hand to `new Headers()`.
      expect(() => new Headers(headers)).not.toThrow();
    }
  });

  it('never reads a variable the policy does not grant', () => {
    const read: string[] = [];
    const builder = compileOutboundHeaders({ headers: {}, envHeaders: { 'X-Api-Key': 'AWS_SECRET_ACCESS_KEY' }, allowedEnvNames: ['DOCS_TOKEN'] });
    builder.build({}, (name) => {
      read.push(name);
      return 'x';
    });
    expect(read).toEqual([]);
  });
});

describe('compileOutboundHeaders: configuration it refuses at compile time', () => {
  /** [label, options] */
  const bad: readonly (readonly [string, Partial<OutboundHeadersOptions>])[] = [
    ['hop-by-hop configured header', { headers: { Connection: 'close' } }],
    ['proxy-* configured header', { headers: { 'Proxy-Authorization': SECRET } }],
    ['Host configured header', { headers: { Host: 'internal.example' } }],
    ['Content-Length configured header', { headers: { 'Content-Length': '0' } }],
    ['transport-owned session id', { headers: { 'Mcp-Session-Id': 'hijack' } }],
    ['transport-owned protocol version from env', { envHeaders: { 'MCP-Protocol-Version': 'V' } }],
    ['transport-owned Mcp-Param-* header', { headers: { 'Mcp-Param-Region': 'x' } }],
    ['invalid header name', { headers: { 'X Bad': 'x' } }],
    ['same name twice in different case', { headers: { 'X-Team': 'a', 'x-team': 'b' } }],
    ['CR LF in a configured value', { headers: { 'X-Api-Key': `${SECRET}\r\nx-evil: 1` } }],
  ];

  it.each(bad)('refuses %s without echoing any value', (_label, options) => {
    let message = '';
    expect(() => {
      try {
        compileOutboundHeaders({ headers: {}, envHeaders: {}, ...options });
      } catch (error) {
        message = (error as Error).message;
        throw error;
      }
    }).toThrow(TypeError);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain('internal.example');
  });
});

describe('checkOutboundHeaderName', () => {
  /** [name, ok or the code] */
  const cases: readonly (readonly [string, true | string])[] = [
    ['X-Team', true],
    ['Authorization', true],
    ['x-api-key', true],
    ['Connection', 'HEADER_NAME_RESERVED'],
    ['proxy-anything', 'HEADER_NAME_RESERVED'],
    ['accept', 'HEADER_NAME_RESERVED'],
    ['last-event-id', 'HEADER_NAME_RESERVED'],
    ['mcp-method', 'HEADER_NAME_RESERVED'],
    ['', 'HEADER_NAME_INVALID'],
    ['x:y', 'HEADER_NAME_INVALID'],
    ['x\ny', 'HEADER_NAME_INVALID'],
  ];

  it.each(cases)('%j → %s', (name, expected) => {
    const result = checkOutboundHeaderName(name);
    if (expected === true) expect(result).toEqual({ ok: true });
    else expect(result).toMatchObject({ ok: false, code: expected });
  });
});

describe('compileOutboundHeaders with no headers configured', () => {
  it('sends only the allowlisted transport headers', () => {
    const incoming = new Headers({ accept: 'application/json', authorization: 'x', cookie: 'y' });
    expect(compileOutboundHeaders({ headers: {}, envHeaders: {} }).build(incoming, noEnv)).toEqual({
      headers: { accept: 'application/json' },
      skipped: [],
    });
  });
});
