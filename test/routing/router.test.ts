/**
 * The router on its own: `routeRequest` over a scope of real links to two stdio fixture children
 * and a real catalogue. Lists merge under namespaces; a call reaches the one owning server under
 * the upstream's own name; hidden and unknown names answer alike; a server whose list failed makes
 * its calls unavailable rather than unknown; bad params and unknown methods are refused before
 * any upstream sees them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalogue } from '../../src/catalogue/catalogue.js';
import type { VisibilityFilter } from '../../src/catalogue/merge.js';
import { GatewayError } from '../../src/errors.js';
import { routeRequest, type CallContext, type RouteScope } from '../../src/routing/router.js';
import type { UpstreamLink } from '../../src/upstream/link.js';
import { assertBuilt } from '../integration/harness/paths.js';
import { connectFixture, logger, recordingSink } from '../upstream/fixture-link.js';

const links = new Map<string, UpstreamLink>();
/** Which server each `withLink` went to, in order. */
const routed: string[] = [];
let scope: RouteScope;

/** `a`'s echo is hidden; server `down` is configured but its list cannot be fetched. */
const hideEcho: VisibilityFilter = (server, name) => !(server === 'a' && name === 'echo');

beforeAll(async () => {
  assertBuilt();
  const [a, b] = await Promise.all([connectFixture(), connectFixture()]);
  links.set('a', a).set('b', b);
  const servers = ['a', 'b', 'down'];
  const linkFor = async (server: string) => {
    const link = links.get(server);
    if (link === undefined) throw new Error(`${server} is down`);
    return link;
  };
  scope = {
    servers,
    catalogue: new Catalogue({ servers, linkFor }, { separator: '__', toolFilter: hideEcho, logger }),
    access: undefined,
    tools: undefined,
    withLink: async (server, fn) => {
      routed.push(server);
      return fn(await linkFor(server));
    },
    withTaskLink: undefined,
    noteSubscription: undefined,
    broadcast: undefined,
    setLogLevel: undefined,
    inputBridge: undefined,
    tasks: undefined,
    gatewayResources: undefined,
    admitTool: undefined,
  };
});
afterAll(async () => {
  await Promise.all([...links.values()].map((link) => link.close()));
});

function call(meta?: Record<string, unknown>): CallContext & { sink: ReturnType<typeof recordingSink> } {
  return { sink: recordingSink(), signal: new AbortController().signal, meta, era: '2025' };
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => expect.fail('expected a refusal'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('routeRequest', () => {
  it('lists every reachable server’s tools under its namespace, without the hidden one', async () => {
    const { tools } = (await routeRequest(scope, 'tools/list', {}, call())) as { tools: Array<{ name: string }> };
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['a__slow', 'b__echo', 'b__slow']));
    expect(names).not.toContain('a__echo');
    expect(names.some((n) => n.startsWith('down__'))).toBe(false);
  });

  it('sends a call to the one server that owns the name, under the upstream’s own name', async () => {
    routed.length = 0;
    const result = await routeRequest(scope, 'tools/call', { name: 'b__echo', arguments: { text: 'routed' } }, call());
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'routed' }] });
    expect(routed).toEqual(['b']);
  });

  it('answers a hidden tool exactly like an unknown one, and never reaches an upstream', async () => {
    routed.length = 0;
    const hidden = await refusal(routeRequest(scope, 'tools/call', { name: 'a__echo', arguments: { text: 'x' } }, call()));
    const unknown = await refusal(routeRequest(scope, 'tools/call', { name: 'a__nothing', arguments: {} }, call()));
    expect(hidden.code).toBe('UNKNOWN_TOOL');
    expect(unknown.code).toBe('UNKNOWN_TOOL');
    expect(hidden.message.replace('a__echo', 'NAME')).toBe(unknown.message.replace('a__nothing', 'NAME'));
    expect(routed).toEqual([]);
  });

  it('reports a call to a server whose list failed as that server’s unavailability', async () => {
    await routeRequest(scope, 'tools/list', {}, call());
    const error = await refusal(routeRequest(scope, 'tools/call', { name: 'down__echo', arguments: {} }, call()));
    expect(error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(error.message).toMatch(/"down"/);
  });

  it('relays a call’s progress under the client’s token, whatever token the link used upstream', async () => {
    const context = call({ progressToken: 'mine' });
    await routeRequest(scope, 'tools/call', { name: 'b__slow', arguments: { ms: 20, steps: 2 }, _meta: { progressToken: 'mine' } }, context);
    expect(context.sink.seen.map((m) => [m.method, m.params?.progressToken])).toEqual([
      ['notifications/progress', 'mine'],
      ['notifications/progress', 'mine'],
    ]);
  });

  it('routes a resource read by its URI to the first server in order that lists it', async () => {
    routed.length = 0;
    const result = (await routeRequest(scope, 'resources/read', { uri: 'test://static-text' }, call())) as { contents: Array<{ text?: string }> };
    expect(result.contents[0]?.text).toBe('This is the content of the static text resource.');
    expect(routed).toEqual(['a']);
    const unknown = await refusal(routeRequest(scope, 'resources/read', { uri: 'test://nowhere' }, call()));
    expect(unknown.code).toBe('UNKNOWN_RESOURCE');
  });

  it.each([
    ['tools/call', { name: 'b__echo', arguments: ['not', 'an', 'object'] }, 'INVALID_PARAMS'],
    ['tools/call', { name: 42 }, 'INVALID_PARAMS'],
    ['prompts/get', { name: 'b__test_simple_prompt', arguments: { n: 1 } }, 'INVALID_PARAMS'],
    ['completion/complete', { ref: { type: 'ref/other' } }, 'INVALID_PARAMS'],
    ['tools/destroy', {}, 'NOT_SUPPORTED'],
    ['constructor', {}, 'NOT_SUPPORTED'],
  ])('refuses %s %j with %s before any upstream sees it', async (method, params, code) => {
    routed.length = 0;
    expect((await refusal(routeRequest(scope, method, params, call()))).code).toBe(code);
    expect(routed).toEqual([]);
  });
});
