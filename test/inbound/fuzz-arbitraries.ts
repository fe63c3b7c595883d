/**
 * fast-check arbitraries for fuzzing the MCP endpoint over HTTP: request lines, headers and
 * bodies a hostile or broken client might send. Every body arbitrary here is *invalid by
 * construction* for reaching an upstream (bad bytes, bad JSON-RPC, a batch, too deep, too big,
 * an unknown method, a name no upstream serves), so a test can demand that none of it arrives.
 * Two arbitraries at the end are different on purpose: well-formed JSON-RPC that MCP still rules
 * out (`strayNotification`, `wrongTypedArgumentsCall`), for the gateway's known forwarding gaps.
 *
 * Sources for what "invalid" means: JSON-RPC 2.0 §4–§6 (envelope, ids, batches), MCP 2025-11-25
 * and 2026-07-28 Streamable HTTP (headers, sessions, envelope claim), MCP schema (params shapes).
 */
import fc from 'fast-check';

/** What one fuzz case sends. `chunks`, when set, is written piece by piece (chunked encoding). */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  chunks?: number;
}

/** Names the gateway under test really exposes; fuzzed names avoid them (see `unservedName`). */
export const REAL_NAMES: ReadonlySet<string> = new Set([
  'shared__echo',
  'own__echo',
  'shared__greeting',
  'own__greeting',
  'rec://note',
]);

export const MODERN_VERSION = '2026-07-28';
export const VERSIONS_2025 = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** MCP methods either era knows, requests and notifications (client → server). */
export const KNOWN_METHODS: readonly string[] = [
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'tasks/get',
  'tasks/list',
  'tasks/cancel',
  'tasks/result',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
];

const KNOWN_METHOD_SET = new Set(KNOWN_METHODS);

export const HTTP_METHODS = ['POST', 'GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'] as const;

/** Paths of the aggregate endpoint, its side channels, and near misses. */
export const fuzzPath = fc.constantFrom(
  '/mcp',
  '/mcp',
  '/mcp',
  '/mcp/servers/shared',
  '/mcp/servers/own',
  '/mcp/servers/nope',
  '/mcp/',
  '/mcp?x=1',
  '/mcp/servers/',
  '/mcp/servers/shared/extra',
);

/** A header value node:http will send: tab, printable ASCII and Latin-1 (RFC 9110 obs-text). */
export const headerValue = fc.string({
  unit: fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
    { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }).map((c) => String.fromCharCode(c)) },
    { weight: 1, arbitrary: fc.constant('\t') },
  ),
  maxLength: 80,
});

/** A string for use inside JSON: any code unit, lone surrogates included. */
const anyString = fc.string({ unit: 'binary', maxLength: 40 });

export const contentType = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json;',
      ' application/json ',
      'application/json; charset=latin1; x="y"',
      'application/jsonx',
      'application/json-rpc',
      'application/ld+json',
      'text/plain',
      'text/event-stream',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      '',
      ';',
    ),
    headerValue,
  ),
  { nil: undefined, freq: 4 },
);

export const accept = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json, text/event-stream',
      'text/event-stream, application/json',
      'application/json',
      'text/event-stream',
      '*/*',
      'application/*, text/*',
      'text/html',
      '',
      'application/json;q=0, text/event-stream;q=0',
    ),
    headerValue,
  ),
  { nil: undefined, freq: 4 },
);

export const protocolVersion = fc.option(
  fc.oneof(fc.constantFrom(MODERN_VERSION, ...VERSIONS_2025, '9999-12-31', '2025-13-45', '', 'latest'), headerValue),
  { nil: undefined, freq: 3 },
);

/** A session id: random UUIDs, junk, long junk, or (when given) a live one. */
export function sessionId(live?: string) {
  const choices = [
    fc.uuid(),
    headerValue,
    fc.string({ unit: 'binary-ascii', maxLength: 8 }).map((s) => s.replace(/[^\t\x20-\x7e]/g, '')),
    fc.integer({ min: 1, max: 2048 }).map((n) => 'a'.repeat(n)),
    // Past node:http's (and the policy's) 16 KiB header limit: 431 before any handler runs.
    fc.integer({ min: 16_000, max: 20_000 }).map((n) => 'b'.repeat(n)),
  ];
  const some = live === undefined ? fc.oneof(...choices) : fc.oneof({ weight: 3, arbitrary: fc.constant(live) }, ...choices);
  return fc.option(some, { nil: undefined, freq: 3 });
}

/** The 2026 routing headers (`Mcp-Method`, `Mcp-Name`). */
const mcpMethodHeader = fc.option(fc.oneof(fc.constantFrom(...KNOWN_METHODS), headerValue), { nil: undefined, freq: 2 });
const mcpNameHeader = fc.option(fc.oneof(fc.constantFrom(...REAL_NAMES), headerValue), { nil: undefined, freq: 2 });

/** Headers of a fuzz request; only set keys are sent. */
export function fuzzHeaders(live?: string): fc.Arbitrary<Record<string, string>> {
  return fc
    .record({
      'content-type': contentType,
      accept,
      'mcp-session-id': sessionId(live),
      'mcp-protocol-version': protocolVersion,
      'mcp-method': mcpMethodHeader,
      'mcp-name': mcpNameHeader,
      'last-event-id': fc.option(headerValue, { nil: undefined, freq: 8 }),
    })
    .map((headers) => {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = value;
      return out;
    });
}

/** A method name that is not an MCP method. */
export const unknownMethod = fc
  .oneof(anyString, fc.constantFrom('tools/delete', 'admin/shutdown', 'Tools/List', 'tools/list ', '', 'rpc.discover', '__proto__', 'constructor', 'hasOwnProperty'))
  .filter((m) => !KNOWN_METHOD_SET.has(m));

/** A tool, prompt or resource name that no upstream serves. */
export const unservedName = fc
  .oneof(anyString, fc.constantFrom('echo', 'shared__', '__echo', 'shared__echo ', 'SHARED__ECHO', 'rec://note/', 'rec:', '__proto__'))
  .filter((n) => !REAL_NAMES.has(n));

/** A JSON value that is not a plain object (what `params` must be in MCP). */
const nonObject = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
);

/** A JSON-RPC id that JSON-RPC 2.0 does not allow (fraction, object, array, boolean). */
const badId = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.boolean(),
);
const goodId = fc.oneof(fc.integer(), fc.string({ maxLength: 20 }));

/** The 2026 per-request envelope, sometimes with garbage in it. */
const envelope = fc.oneof(
  fc.constant({
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1.0.0' },
  }),
  fc.record(
    {
      'io.modelcontextprotocol/protocolVersion': fc.oneof(fc.constant(MODERN_VERSION), fc.jsonValue({ maxDepth: 1 })),
      'io.modelcontextprotocol/clientCapabilities': fc.jsonValue({ maxDepth: 2 }),
      'io.modelcontextprotocol/clientInfo': fc.jsonValue({ maxDepth: 2 }),
      'io.modelcontextprotocol/logLevel': fc.jsonValue({ maxDepth: 1 }),
    },
    { requiredKeys: [] },
  ),
);

/** Params of well-formed shape for a method, with names nothing serves. */
function paramsFor(method: string): fc.Arbitrary<Record<string, unknown>> {
  switch (method) {
    case 'tools/call':
      return fc.record({ name: unservedName, arguments: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }) });
    case 'prompts/get':
      return fc.record({ name: unservedName, arguments: fc.dictionary(fc.string({ maxLength: 8 }), fc.string(), { maxKeys: 3 }) });
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return fc.record({ uri: unservedName });
    case 'completion/complete':
      return fc.record({
        ref: fc.oneof(
          fc.record({ type: fc.constant('ref/prompt'), name: unservedName }),
          fc.record({ type: fc.constant('ref/resource'), uri: unservedName }),
          fc.record({ type: anyString }),
        ),
        argument: fc.record({ name: fc.string(), value: fc.string() }),
      });
    case 'initialize':
      return fc.record({
        protocolVersion: fc.constantFrom(...VERSIONS_2025),
        capabilities: fc.constant({}),
        clientInfo: fc.constant({ name: 'fuzz', version: '1.0.0' }),
      });
    default:
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });
  }
}

/** A well-formed request or notification for a known method, before an invalidating mutation. */
const wellFormedTemplate = fc.constantFrom(...KNOWN_METHODS).chain((method) =>
  fc.record({
    method: fc.constant(method),
    params: paramsFor(method),
    id: method.startsWith('notifications/') ? fc.constant(undefined) : goodId,
    withEnvelope: fc.boolean(),
    envelope,
  }),
);

type Mutation = (message: Record<string, unknown>) => fc.Arbitrary<Record<string, unknown>>;

/** Changes that make a JSON-RPC message invalid whatever else it holds. */
const INVALIDATING: readonly Mutation[] = [
  (m) => fc.oneof(fc.constant(undefined), fc.constantFrom('1.0', '2', '2.0 ', 2, 2.0, null, true)).map((jsonrpc) => ({ ...m, jsonrpc })),
  (m) => badId.map((id) => ({ ...m, id })),
  (m) => fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.string(), { maxLength: 2 }), fc.constant({})).map((method) => ({ ...m, method })),
  (m) => fc.constant({ ...m, method: undefined }),
  (m) => nonObject.map((params) => ({ ...m, params })),
  (m) => fc.jsonValue({ maxDepth: 1 }).map((result) => ({ ...m, result })),
  (m) => fc.record({ code: fc.integer(), message: fc.string() }).map((error) => ({ ...m, error })),
];

/**
 * A JSON-RPC message that no version of JSON-RPC 2.0 or MCP accepts: a well-formed template with
 * one or more invalidating mutations (wrong `jsonrpc`, fractional/object id, non-string method,
 * non-object params, a request that is also a response).
 */
export const invalidJsonRpcMessage: fc.Arbitrary<Record<string, unknown>> = wellFormedTemplate.chain((t) => {
  const base: Record<string, unknown> = { jsonrpc: '2.0', method: t.method };
  if (t.id !== undefined) base.id = t.id;
  base.params = t.withEnvelope ? { ...t.params, _meta: t.envelope } : t.params;
  return fc
    .array(fc.integer({ min: 0, max: INVALIDATING.length - 1 }), { minLength: 1, maxLength: 3 })
    .chain((picks) => picks.reduce((acc, pick) => acc.chain((m) => INVALIDATING[pick]!(m)), fc.constant(base)))
    .map(withoutUndefined);
});

/**
 * A well-formed JSON-RPC request that no upstream may see: an unknown method, or a known routed
 * method naming a tool, prompt or resource that does not exist. The gateway must answer it.
 */
export const unroutableRequest: fc.Arbitrary<Record<string, unknown>> = fc
  .record({
    method: fc.oneof(unknownMethod, fc.constantFrom('tools/call', 'prompts/get', 'resources/read', 'resources/subscribe', 'completion/complete')),
    id: goodId,
    withEnvelope: fc.boolean(),
    envelope,
  })
  .chain((r) =>
    paramsFor(r.method).map((params) => ({
      jsonrpc: '2.0',
      id: r.id,
      method: r.method,
      params: r.withEnvelope ? { ...params, _meta: r.envelope } : params,
    })),
  );

/** Objects shaped like JSON-RPC with any field missing or of any type; names never real ones. */
export const jsonRpcShaped: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 1 })),
      id: fc.oneof(goodId, badId, fc.constant(null)),
      method: fc.oneof(fc.constantFrom(...KNOWN_METHODS), unknownMethod, fc.jsonValue({ maxDepth: 1 })),
      params: fc.oneof(
        fc.record({ name: unservedName, uri: unservedName, arguments: fc.jsonValue({ maxDepth: 2 }), _meta: envelope }, { requiredKeys: [] }),
        nonObject,
      ),
      result: fc.jsonValue({ maxDepth: 2 }),
      error: fc.oneof(fc.record({ code: fc.integer(), message: fc.string() }), fc.jsonValue({ maxDepth: 1 })),
    },
    { requiredKeys: [] },
  )
  // An `initialize` that happens to be valid opens a real session: legitimate, so kept out.
  .filter((m) => m.method !== 'initialize');

function withoutUndefined(m: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined));
}

/** A JSON-RPC batch (MCP 2025-06-18 removed batching; the gateway refuses every batch). */
export const batchBody = fc
  .array(fc.oneof(jsonRpcShaped, invalidJsonRpcMessage, unroutableRequest, fc.jsonValue({ maxDepth: 2 })), { maxLength: 5 })
  .map((items) => JSON.stringify(items));

/** Arbitrary bytes: not UTF-8, not JSON, NULs and lone continuation bytes included. */
export const bytesBody = fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes));

/** Any JSON text (scalars, arrays, objects, odd numbers, escapes). */
export const jsonValueBody = fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value));

/** JSON text that is almost valid: truncated, with a trailing comma, a BOM, comments, NaN. */
export const nearlyJsonBody = fc.oneof(
  invalidJsonRpcMessage.map((m) => JSON.stringify(m)).chain((text) => fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
  invalidJsonRpcMessage.map((m) => `\uFEFF${JSON.stringify(m)}`),
  invalidJsonRpcMessage.map((m) => `${JSON.stringify(m)},`),
  invalidJsonRpcMessage.map((m) => `${JSON.stringify(m)}${JSON.stringify(m)}`),
  fc.constantFrom('{"jsonrpc":"2.0","id":NaN,"method":"ping"}', '{/* */}', "{'a':1}", '{"a":1,}', '[', '"', '\\', 'null', 'true', '0', '""', '   ', '\n'),
);

/** The nesting limit of the gateway's default body limits. */
export const MAX_DEPTH = 64;

/** JSON text nested around the limit (brackets mixed, bracket decoys inside strings). */
export const deepBody: fc.Arbitrary<string> = fc
  .record({
    depth: fc.integer({ min: MAX_DEPTH - 8, max: MAX_DEPTH + 8 }),
    kinds: fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }),
    decoy: fc.constantFrom('', '[[[[', '{{{{', '\\"[[', '"]]]]', '\\\\'),
    method: fc.oneof(unknownMethod, fc.constant('tools/call')),
  })
  .map(({ depth, kinds, decoy, method }) => {
    // The message object is level 1 and params level 2; the rest nests inside arguments.
    let inner: unknown = decoy;
    for (let level = depth; level > 2; level--) inner = kinds[level] === true ? [inner] : { k: inner };
    const message = { jsonrpc: '2.0', id: 1, method, params: { name: 'nope', arguments: inner } };
    return JSON.stringify(message);
  });

/** The 1 MiB limit of the gateway's default body limits. */
export const BODY_LIMIT = 1024 * 1024;

/** A JSON-RPC body whose size is within a few hundred bytes of the limit, padded with `pad`. */
export interface HugeBody {
  bytes: number;
  text: string;
  chunks: number | undefined;
}

export const hugeBody: fc.Arbitrary<HugeBody> = fc
  .record({
    delta: fc.integer({ min: -300, max: 300 }),
    pad: fc.constantFrom('x', 'é', '€', '😀', '\\n', '\\"'),
    where: fc.constantFrom('name', 'arguments', 'method', 'id'),
    chunks: fc.option(fc.integer({ min: 2, max: 64 }), { nil: undefined }),
  })
  .map(({ delta, pad, where, chunks }) => {
    const target = BODY_LIMIT + delta;
    const build = (padding: string): string => {
      const p = `"${padding}"`;
      switch (where) {
        case 'name':
          return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":${p}}}`;
        case 'arguments':
          return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope","arguments":{"text":${p}}}}`;
        case 'method':
          return `{"jsonrpc":"2.0","id":1,"method":${p}}`;
        default:
          return `{"jsonrpc":"2.0","id":${p},"method":"nope/nope"}`;
      }
    };
    const overhead = Buffer.byteLength(build(''));
    const unit = Buffer.byteLength(pad);
    const count = Math.max(0, Math.floor((target - overhead) / unit));
    let text = build(pad.repeat(count));
    // Top up with ASCII to land exactly on the target where the unit is wider than one byte.
    const short = target - Buffer.byteLength(text);
    if (short > 0) text = build(pad.repeat(count) + 'x'.repeat(short));
    return { bytes: Buffer.byteLength(text), text, chunks };
  });

/** The true nesting depth of a JSON value (scalars are 0, `{}` and `[]` are 1). */
export function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (typeof value === 'object' && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** A whole fuzz request: any method, path and headers, with a body from `bodies`. */
export function fuzzRequest(bodies: fc.Arbitrary<string | Buffer | undefined>, live?: string): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    method: fc.constantFrom(...HTTP_METHODS),
    path: fuzzPath,
    headers: fuzzHeaders(live),
    body: fc.option(bodies, { nil: undefined, freq: 8 }),
  });
}

/** A POST to the aggregate endpoint with correct MCP headers, so the body is what is judged. */
export function wellHeadedPost(bodies: fc.Arbitrary<string | Buffer>, extra: Record<string, string> = {}): fc.Arbitrary<FuzzRequest> {
  return bodies.map((body) => ({
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
    body,
  }));
}

/** The notifications an MCP client may send a server (2025-11-25 schema, `ClientNotification`). */
export const CLIENT_NOTIFICATIONS: readonly string[] = [
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
];

/**
 * A well-formed JSON-RPC notification whose method is no MCP client notification: an unknown
 * name, or a request method sent without an id. No upstream should be handed one.
 */
export const strayNotification: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      method: fc.oneof(unknownMethod, fc.constantFrom(...KNOWN_METHODS.filter((m) => !CLIENT_NOTIFICATIONS.includes(m)))),
      params: fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => k !== '_meta'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    },
    { requiredKeys: ['method'] },
  )
  .map((n) => ({ jsonrpc: '2.0', ...n }));

/**
 * A `tools/call` or `prompts/get` for a name that really exists whose `arguments` break the MCP
 * schema: not an object for a tool (`CallToolRequestParams.arguments: { [key]: unknown }`), not
 * an object of strings for a prompt (`GetPromptRequestParams.arguments: { [key]: string }`).
 */
export const wrongTypedArgumentsCall: fc.Arbitrary<{ method: string; name: string; arguments: unknown }> = fc.oneof(
  fc.record({ method: fc.constant('tools/call'), name: fc.constantFrom('shared__echo', 'own__echo'), arguments: nonObject }),
  fc.record({
    method: fc.constant('prompts/get'),
    name: fc.constantFrom('shared__greeting', 'own__greeting'),
    arguments: fc.oneof(
      nonObject,
      fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 })), {
        minKeys: 1,
        maxKeys: 3,
      }),
    ),
  }),
);
