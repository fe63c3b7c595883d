/** Pure parts of the cluster: the forwarded-request check, stream id sniffing, record encoding. */
import { describe, expect, it } from 'vitest';
import { checkForwarded, HOP_HEADER, SECRET_HEADER } from '../../src/cluster/forward.js';
import { mintProof, PROOF_HEADER } from '../../src/cluster/principal-proof.js';
import { firstStreamId } from '../../src/cluster/inflight-tap.js';
import { decodeRecord, encodeRecord, type SessionRecord } from '../../src/cluster/session-record.js';
import { parseConfig } from '../../src/config/load.js';

describe('checkForwarded', () => {
  const binding = { sessionId: 's-1', method: 'POST', path: '/mcp' };
  const session = { 'mcp-session-id': 's-1' };
  it.each([
    { name: 'a client request', headers: {}, secret: 's3cret', expected: { ok: true, forwarded: false } },
    { name: 'forwarded, no secret configured', headers: { [HOP_HEADER]: 'A' }, secret: undefined, expected: { ok: true, forwarded: true } },
    { name: 'forwarded with a proof under the secret', headers: { ...session, [HOP_HEADER]: 'A', [PROOF_HEADER]: mintProof('s3cret', 'p', binding) }, secret: 's3cret', expected: { ok: true, forwarded: true } },
    { name: 'forwarded without a proof', headers: { ...session, [HOP_HEADER]: 'A' }, secret: 's3cret', expected: { ok: false } },
    // The raw secret proves nothing: it is never sent, and knowing it is not the same as a proof.
    { name: 'forwarded with the raw secret only', headers: { ...session, [HOP_HEADER]: 'A', [SECRET_HEADER]: 's3cret' }, secret: 's3cret', expected: { ok: false } },
    { name: 'forwarded with a proof under another key', headers: { ...session, [HOP_HEADER]: 'A', [PROOF_HEADER]: mintProof('nope', 'p', binding) }, secret: 's3cret', expected: { ok: false } },
    { name: 'forwarded with a proof for another session', headers: { 'mcp-session-id': 's-2', [HOP_HEADER]: 'A', [PROOF_HEADER]: mintProof('s3cret', 'p', binding) }, secret: 's3cret', expected: { ok: false } },
  ])('judges $name', ({ headers, secret, expected }) => {
    const result = checkForwarded(new Request('http://127.0.0.1/mcp', { method: 'POST', headers }), secret);
    expect(result).toMatchObject(expected);
    if (!result.ok) expect(result.message).not.toContain('s3cret');
  });
});

describe('firstStreamId', () => {
  it.each([
    { text: 'id: abc::1\nretry: 1000\ndata: \n\n', expected: 'abc' },
    { text: 'event: message\nid: _GET_stream::12\ndata: {}\n\n', expected: '_GET_stream' },
    { text: 'id: abc::1', expected: undefined }, // line not complete yet
    { text: 'data: {"id: x::1"}\n\n', expected: undefined },
    { text: 'id: not-an-event-id\n', expected: undefined },
  ])('reads $expected from $text', ({ text, expected }) => {
    expect(firstStreamId(text)).toBe(expected);
  });
});

describe('session record', () => {
  it('round-trips through the Redis hash, principal included or not', () => {
    const base: SessionRecord = {
      sessionId: 's1',
      owner: 'A',
      endpoint: 'aggregate',
      principal: undefined,
      protocolVersion: '2025-11-25',
      initialize: { protocolVersion: '2025-11-25', capabilities: { sampling: {} }, clientInfo: { name: 'c', version: '1' } },
      createdAt: 123,
    };
    for (const record of [base, { ...base, principal: 'alice' }]) expect(decodeRecord('s1', encodeRecord(record))).toEqual(record);
  });

  it('refuses a hash it did not write', () => {
    expect(decodeRecord('s1', {})).toBeUndefined();
    expect(decodeRecord('s1', { owner: 'A', endpoint: 'aggregate', protocolVersion: 'x', initialize: '[1]' })).toBeUndefined();
  });
});

describe('cluster config', () => {
  const servers = { fx: { transport: 'stdio', command: 'node' } };
  it('refuses a cluster without the redis event store', () => {
    expect(() => parseConfig({ servers, cluster: {} })).toThrow(/cluster/);
  });
  it('accepts a cluster on the redis store, with a lease default', () => {
    const config = parseConfig({ servers, eventStore: { kind: 'redis', url: 'redis://127.0.0.1:6379', allowPrivateNetwork: true }, cluster: { replicaId: 'A' } });
    expect(config.cluster).toEqual({ replicaId: 'A', leaseMs: 10_000, allowPrivateNetwork: false });
  });
});
