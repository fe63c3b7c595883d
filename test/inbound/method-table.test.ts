/**
 * The gateway's method table on its own, with no transport: the handshake answers it builds for
 * each era, ping, the checks it makes before routing, and requests routed through a real scope
 * to a real stdio fixture child (the rpc log line, era-dependent error codes).
 */
import { ProtocolError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { as2025ToolList, createMethodTable, negotiatedVersion, type Era, type MethodCall, type MethodTableOptions } from '../../src/inbound/method-table.js';
import { createLogger } from '../../src/observability/logger.js';
import { StatelessScope } from '../../src/routing/scopes/stateless-scope.js';
import { UpstreamRegistry } from '../../src/upstream/registry.js';
import { ServerRoster } from '../../src/upstream/server-roster.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { deps, logger, recordingSink, serverConfigs } from '../upstream/fixture-link.js';

let registry: UpstreamRegistry;
let stateless: StatelessScope;

beforeAll(async () => {
  assertBuilt();
  registry = new UpstreamRegistry({
    servers: serverConfigs({ fx: stdioServer(newMarker(), { isolation: 'session' }) }),
    statelessPool: { maxPerServer: 2, idleTimeoutMs: 60_000, maxWaitMs: 5_000, cancelGraceMs: 2_000 },
    maxSessionChildren: 4,
    deps,
    logger,
  });
  await registry.start();
  stateless = new StatelessScope({ registry, servers: ServerRoster.of(['fx']), catalogue: { separator: '__', toolFilter: () => true }, logger });
});
afterAll(async () => {
  await stateless?.close();
  await registry.close();
});

function table(era: Era, extra: Partial<MethodTableOptions> = {}) {
  return createMethodTable({
    era,
    name: 'portcullis-test',
    version: '1.2.3',
    capabilities: { tools: { listChanged: true }, logging: {} },
    instructions: 'the gateway',
    logger,
    ...extra,
  });
}

const CLIENT = { name: 'c', version: '1' };
const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT };

function call(): MethodCall {
  return { scope: stateless.forPrincipal(undefined), signal: new AbortController().signal, sink: recordingSink() };
}

/** The JSON-RPC error `promise` rejects with. */
async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string; data: unknown }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ProtocolError);
  const { code, message, data } = error as ProtocolError;
  return { code, message, data };
}

describe('the handshake answers', () => {
  it('initialize keeps a version the gateway serves and answers the newest for any other', async () => {
    for (const version of SUPPORTED_PROTOCOL_VERSIONS) expect(negotiatedVersion(version)).toBe(version);
    expect(negotiatedVersion('2026-07-28')).toBe(SUPPORTED_PROTOCOL_VERSIONS[0]);
    expect(negotiatedVersion('1999-01-01')).toBe(SUPPORTED_PROTOCOL_VERSIONS[0]);
    expect(negotiatedVersion(42)).toBe(SUPPORTED_PROTOCOL_VERSIONS[0]);
    const result = await table('2025').handle(
      { id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
      call(),
    );
    expect(result).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: { tools: { listChanged: true }, logging: {} },
      serverInfo: { name: 'portcullis-test', version: '1.2.3' },
      instructions: 'the gateway',
    });
  });

  it('server/discover names the 2026 revisions and the same capabilities', async () => {
    const result = await table('2026').handle({ id: 'd', method: 'server/discover', params: {} }, call());
    expect(result).toEqual({ supportedVersions: ['2026-07-28'], capabilities: { tools: { listChanged: true }, logging: {} }, instructions: 'the gateway' });
  });

  it('completes the answer for the asking client from its _meta, and a refused handshake is -32602', async () => {
    const seen: unknown[] = [];
    const handshake = (meta: Record<string, unknown> | undefined) => {
      seen.push(meta);
      if (meta?.persona === 'bad') throw new GatewayError('INVALID_PARAMS', 'initialize: persona refused');
      return { instructions: `as ${String(meta?.persona)}`, meta: { 'portcullis/server': 'aggregate' } };
    };
    const t = table('2025', { handshake });
    const result = await t.handle({ id: 1, method: 'initialize', params: { ...INIT, _meta: { persona: 'pirate' } } }, call());
    expect(result.instructions).toBe('as pirate');
    expect(result._meta).toEqual({ 'portcullis/server': 'aggregate' });
    expect(seen).toEqual([{ persona: 'pirate' }]);
    const refused = await refusal(t.handle({ id: 2, method: 'initialize', params: { ...INIT, _meta: { persona: 'bad' } } }, call()));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toMatch(/persona refused/);
  });

  it('the other era’s handshake method does not exist (-32601)', async () => {
    expect((await refusal(table('2026').handle({ id: 1, method: 'initialize', params: {} }, call()))).code).toBe(-32601);
    expect((await refusal(table('2025').handle({ id: 1, method: 'server/discover', params: {} }, call()))).code).toBe(-32601);
  });

  it('ping answers an empty result to a 2025 client; 2026-07-28 has no ping (-32601)', async () => {
    expect(await table('2025').handle({ id: 1, method: 'ping' }, call())).toEqual({});
    expect((await refusal(table('2026').handle({ id: 1, method: 'ping' }, call()))).code).toBe(-32601);
  });

  it('refuses an initialize without a version, capabilities or client name (-32602 naming the field)', async () => {
    const t = table('2025');
    const bad = [
      [{ capabilities: {}, clientInfo: CLIENT }, /protocolVersion/],
      [{ protocolVersion: '2025-11-25', clientInfo: CLIENT }, /capabilities/],
      [{ protocolVersion: '2025-11-25', capabilities: [], clientInfo: CLIENT }, /capabilities/],
      [{ protocolVersion: '2025-11-25', capabilities: {} }, /clientInfo/],
      [{ protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c' } }, /clientInfo/],
    ] as const;
    for (const [params, field] of bad) {
      const refused = await refusal(t.handle({ id: 1, method: 'initialize', params: { ...params } }, call()));
      expect(refused.code).toBe(-32602);
      expect(refused.message).toMatch(field);
    }
  });

  it('a method of the other revision only does not exist for the client (-32601)', async () => {
    for (const method of ['subscriptions/listen', 'server/discover']) {
      expect((await refusal(table('2025').handle({ id: 1, method, params: {} }, call()))).code).toBe(-32601);
    }
    for (const method of ['resources/subscribe', 'logging/setLevel', 'roots/list', 'tasks/get', 'initialize']) {
      expect((await refusal(table('2026').handle({ id: 1, method, params: {} }, call()))).code).toBe(-32601);
    }
  });
});

describe('routed requests', () => {
  it('a tool call reaches the upstream and is logged once, with outcome and name', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const recording = createLogger({ destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } });
    const result = await table('2025', { logger: recording }).handle(
      { id: 7, method: 'tools/call', params: { name: 'fx__echo', arguments: { text: 'through the table' } } },
      call(),
    );
    expect(result.content).toEqual([{ type: 'text', text: 'through the table' }]);
    const rpc = lines.filter((line) => line.msg === 'rpc');
    expect(rpc).toHaveLength(1);
    expect(rpc[0]).toMatchObject({ rpc: 'tools/call', name: 'fx__echo', outcome: 'ok', era: '2025' });
  });

  it('an unknown resource is -32002 to a 2025 client and -32602 to a 2026 one (SEP-2164)', async () => {
    const read = { id: 3, method: 'resources/read', params: { uri: 'nowhere://at-all' } };
    expect((await refusal(table('2025').handle(read, call()))).code).toBe(-32002);
    expect((await refusal(table('2026').handle(read, call()))).code).toBe(-32602);
  });

  it('an unknown method is -32601 naming it', async () => {
    const refused = await refusal(table('2025').handle({ id: 4, method: 'nonsense/method', params: {} }, call()));
    expect(refused.code).toBe(-32601);
    expect(refused.message).toMatch(/nonsense\/method/);
  });

  it('refuses a logging level that is none (-32602) before routing it', async () => {
    const refused = await refusal(table('2025').handle({ id: 5, method: 'logging/setLevel', params: { level: 'loud' } }, call()));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toMatch(/loud/);
  });

  it('refuses a 2026 tasks/get whose taskId is not a string (-32602)', async () => {
    const tasks = table('2026', { capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    const refused = await refusal(tasks.handle({ id: 6, method: 'tasks/get', params: { taskId: 12 } }, call()));
    expect(refused.code).toBe(-32602);
  });

  it('bad init options of a 2026 request are refused -32602 naming the option', async () => {
    const t = table('2026', { options: { perRequest: () => ({ ok: false, message: 'deferTools must be a boolean' }) } });
    const refused = await refusal(t.handle({ id: 8, method: 'tools/list', params: { _meta: { 'portcullis/options': { deferTools: 3 } } } }, call()));
    expect(refused.code).toBe(-32602);
    expect(refused.message).toMatch(/deferTools/);
  });
});

describe('a 2025 client’s tool list', () => {
  it('wraps an output schema whose root is not an object as { result }, its local $refs pointing under it', () => {
    const array = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'array',
      items: { $ref: '#/$defs/item' },
      $defs: { item: { type: 'string', default: { $ref: '#/not-a-ref' } } },
    };
    const listed = as2025ToolList({ tools: [{ name: 'a', inputSchema: { type: 'object' }, outputSchema: array }, { name: 'b', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }] });
    expect(listed.tools).toEqual([
      {
        name: 'a',
        inputSchema: { type: 'object' },
        outputSchema: {
          $schema: 'https://json-schema.org/draft/2020-12/schema',
          type: 'object',
          properties: {
            result: {
              type: 'array',
              items: { $ref: '#/properties/result/$defs/item' },
              $defs: { item: { type: 'string', default: { $ref: '#/not-a-ref' } } },
            },
          },
          required: ['result'],
        },
      },
      { name: 'b', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
    ]);
  });

  it('leaves a list with only object roots (or none) as it is, the same object', () => {
    const result = { tools: [{ name: 'a', inputSchema: { type: 'object' } }, { name: 'b', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } }] };
    expect(as2025ToolList(result)).toBe(result);
  });

  it('does not rewrite refs under a schema whose root $id starts a new base', () => {
    const listed = as2025ToolList({ tools: [{ name: 'a', outputSchema: { $id: 'urn:x', type: 'string', $ref: '#/$defs/s' } }] });
    expect((listed.tools as Array<{ outputSchema: unknown }>)[0]!.outputSchema).toEqual({
      type: 'object',
      properties: { result: { $id: 'urn:x', type: 'string', $ref: '#/$defs/s' } },
      required: ['result'],
    });
  });
});
