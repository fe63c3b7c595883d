/** The pure parts of start-failure messages: what they quote, how much, and what they advise. */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.js';
import { listenFailure } from '../../src/inbound/listen-failure.js';
import { missingEnabledTools } from '../../src/upstream/enabled-tools-check.js';
import { describeStartFailure, exitedAtStart, quotableLine, spawnFailure, STDERR_TAIL_CHARS } from '../../src/upstream/start-failure.js';

describe('start failure messages', () => {
  it('finds an egress refusal under the SDK negotiation error and names the setting that allows it', () => {
    const refusal = new UpstreamError('UPSTREAM_BLOCKED', 'docs', 'connection to a private address refused (allowPrivateNetwork is false)');
    const sdk = Object.assign(new Error('Version negotiation probe failed', { cause: refusal }), { code: 'ERA_NEGOTIATION_FAILED' });
    expect(describeStartFailure('docs', sdk, {})).toBe(
      'blocked: its URL resolves to a private address, and the egress guard refuses loopback and private addresses; set "allowPrivateNetwork": true on servers.docs if that is intended',
    );
  });

  it('does not advise allowPrivateNetwork for a refusal it would not lift', () => {
    const refusal = new UpstreamError('UPSTREAM_BLOCKED', 'docs', 'connection to a name without addresses refused');
    expect(describeStartFailure('docs', refusal, {})).toBe('blocked by the egress guard: connection to a name without addresses refused');
  });

  it("prefers the transport's own account and falls back to the error code", () => {
    expect(describeStartFailure('x', new Error('boom'), { startFailure: () => 'exited at start with exit code 2 (it wrote nothing to stderr)' })).toBe(
      'exited at start with exit code 2 (it wrote nothing to stderr)',
    );
    expect(describeStartFailure('x', Object.assign(new Error('closed'), { code: 'CONNECTION_CLOSED' }), { startFailure: () => undefined })).toBe(
      'could not connect (CONNECTION_CLOSED)',
    );
  });

  it('names a refused, unknown or timed-out connection as such, with what to check, never the URL', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4999'), { code: 'ECONNREFUSED' }) });
    const described = describeStartFailure('crm', refused, {});
    expect(described).toBe('connection refused (ECONNREFUSED): nothing accepts connections at the host and port of servers.crm.url; start the server, or correct the URL');
    expect(described).not.toContain('4999');
    const unknown = new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND crm.internal'), { code: 'ENOTFOUND' }) });
    expect(describeStartFailure('crm', unknown, {})).toMatch(/^host not found \(ENOTFOUND\): the host name in servers\.crm\.url does not resolve/);
    const slow = new TypeError('fetch failed', { cause: Object.assign(new Error('Connect Timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }) });
    expect(describeStartFailure('crm', slow, {})).toMatch(/^connection timed out \(UND_ERR_CONNECT_TIMEOUT\): .*servers\.crm\.connectTimeoutMs/);
  });

  it('explains spawn codes without quoting the command', () => {
    expect(spawnFailure('files', 'ENOENT')).toMatch(/^command not found \(ENOENT\): .*servers\.files\.command/);
    expect(spawnFailure('files', 'EACCES')).toMatch(/^command is not executable \(EACCES\)/);
    expect(spawnFailure('files', 'E2BIG')).toBe('command could not be started (E2BIG)');
  });

  it('quotes stderr lines bounded, with terminal control characters replaced', () => {
    expect(quotableLine('\u001b[31mred\u001b[0m\r')).toBe('?[31mred?[0m?');
    const long = quotableLine('x'.repeat(10_000));
    expect(long.length).toBe(STDERR_TAIL_CHARS + 1);
    expect(exitedAtStart({ code: null, signal: 'SIGSEGV' }, [])).toBe('was killed at start by signal SIGSEGV (it wrote nothing to stderr)');
    expect(exitedAtStart({ code: 1, signal: null }, ['a', 'b'])).toBe('exited at start with exit code 1; its last stderr lines:\n    | a\n    | b');
  });

  it('names the address, the errno code and the setting to change when the listener cannot open', () => {
    const inUse = listenFailure('127.0.0.1', 8787, Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' }));
    expect(inUse.code).toBe('LISTEN_FAILED');
    expect(inUse.message).toMatch(/^cannot listen on 127\.0\.0\.1:8787: the address is already in use \(EADDRINUSE\); .*--port or listen\.port/);
    expect(listenFailure('::1', 80, { code: 'EACCES' }).message).toMatch(/^cannot listen on \[::1\]:80: permission denied \(EACCES\)/);
    expect(listenFailure('10.9.9.9', 1, { code: 'EADDRNOTAVAIL' }).message).toContain('listen.host');
    expect(listenFailure('127.0.0.1', 1, { code: 'weird code; rm -rf' }).message).toBe('cannot listen on 127.0.0.1:1 (unknown error)');
  });

  it('lists the enabledTools an upstream does not have', () => {
    expect(missingEnabledTools(['a', 'b', 'c'], [{ name: 'a' }, { name: 'c' }, { nope: 1 }, null])).toEqual(['b']);
    expect(missingEnabledTools([], [{ name: 'a' }])).toEqual([]);
  });
});
