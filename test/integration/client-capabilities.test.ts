/**
 * An upstream sees exactly the capabilities of the client it serves, through a real gateway in
 * front of a spy upstream (test/fixtures/spy-server.ts) over stdio and over Streamable HTTP:
 * - a 2025 session's own connection is initialised with that client's declared capabilities;
 * - a pooled connection declares what a lease can relay, a shared one declares nothing, and on a
 *   2026-07-28 connection each request carries its own client's capabilities in `_meta`;
 * - a server→client request the client did not declare is refused upstream at once (the spy sees
 *   the error), never relayed (the client sees nothing).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, ClientCapabilities } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { spawnUntilReady } from '../fixtures/spawn-until-ready.js';
import { assertBuilt, Cleanup, connectClient, errorOf, httpServer, ROOT, startTestGateway, textOf, type Era } from './harness.js';

const SPY_JS = `${ROOT}dist/test/fixtures/spy-server.js`;
const POOLED = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} };

const perFile = new Cleanup();
const perTest = new Cleanup();
let gateway: RunningGateway;
let dir: string;

function spyStdio(log: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { transport: 'stdio', command: process.execPath, args: [SPY_JS, '--stdio', '--log', join(dir, log)], ...extra };
}

/** What the spy logged (initializes and asks), in order. */
function spyLog(log: string): Array<Record<string, unknown>> {
  try {
    return readFileSync(join(dir, log), 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  } catch {
    return [];
  }
}

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-caps-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  const web = await spawnUntilReady(process.execPath, [SPY_JS, '--http', '--log', join(dir, 'web.jsonl')], {
    label: 'HTTP spy',
    ready: /^SPY_READY (\S+)$/,
  });
  perFile.add(() => web.stop());
  gateway = await startTestGateway(perFile, {
    spy: spyStdio('spy.jsonl', { isolation: 'session' }),
    sharedspy: spyStdio('sharedspy.jsonl', { isolation: 'shared' }),
    web: httpServer(web.match, { isolation: 'session' }),
    sharedweb: httpServer(web.match, { isolation: 'shared' }),
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

interface Spied {
  client: Client;
  /** Methods of every server→client request that reached this client. */
  received: string[];
}

/**
 * A client of `era` declaring `capabilities`. Every server→client request it receives is
 * recorded; sampling and elicitation are answered when declared, anything else is refused.
 */
async function spiedClient(era: Era, capabilities: ClientCapabilities): Promise<Spied> {
  const received: string[] = [];
  const { client } = await connectClient(perTest, gateway.url, era, {
    capabilities,
    setup: (c) => {
      if (capabilities.sampling !== undefined) {
        c.setRequestHandler('sampling/createMessage', () => {
          received.push('sampling/createMessage');
          return { model: 'spy-model', role: 'assistant', content: { type: 'text', text: 'ok' } };
        });
      }
      if (capabilities.elicitation !== undefined) {
        c.setRequestHandler('elicitation/create', () => {
          received.push('elicitation/create');
          return { action: 'accept', content: { answer: 'ok' } };
        });
      }
      if (capabilities.roots !== undefined) {
        c.setRequestHandler('roots/list', () => {
          received.push('roots/list');
          return { roots: [] };
        });
      }
      c.fallbackRequestHandler = async (request) => {
        received.push(request.method);
        throw new Error('not expected');
      };
    },
  });
  return { client, received };
}

interface WhoAmI {
  pid: number;
  era: '2025' | '2026';
  initialize: ClientCapabilities | null;
  perRequest: ClientCapabilities | null;
}

async function whoami(client: Client, server: string): Promise<WhoAmI> {
  return JSON.parse(textOf(await client.callTool({ name: `${server}__whoami`, arguments: {} }))) as WhoAmI;
}

async function ask(client: Client, server: string, args: Record<string, unknown>): Promise<string> {
  return textOf(await client.callTool({ name: `${server}__ask_client`, arguments: args }));
}

const ASKS = ['roots/list', 'sampling/createMessage', 'elicitation/create'] as const;

describe('a 2025 session’s own connection', () => {
  it.each(['spy', 'web'])('to %s is initialised with the client’s empty capabilities, not invented ones', async (server) => {
    const { client } = await spiedClient('2025', {});
    const seen = await whoami(client, server);
    expect(seen.era).toBe('2025');
    expect(seen.initialize).toEqual({});
  });

  it.each(['spy', 'web'])('to %s is initialised with exactly what the client declared', async (server) => {
    const declared = { sampling: {}, roots: { listChanged: true } };
    const { client } = await spiedClient('2025', declared);
    expect((await whoami(client, server)).initialize).toEqual(declared);
  });

  it.each(ASKS)('never relays %s to a client that declared nothing: the upstream is refused at once with -32601', async (method) => {
    const { client, received } = await spiedClient('2025', {});
    expect(await ask(client, 'spy', { method })).toBe('refused -32601');
    expect(received).toEqual([]);
    const refusal = spyLog('spy.jsonl').findLast((entry) => entry.event === 'asked' && entry.method === method);
    expect(refusal).toMatchObject({ outcome: 'refused', code: -32601 });
    expect(String(refusal?.message)).toMatch(/did not declare/);
  });

  it('relays sampling to a client that declared it, and the upstream gets the answer', async () => {
    const { client, received } = await spiedClient('2025', { sampling: {} });
    expect(await ask(client, 'spy', { method: 'sampling/createMessage' })).toBe('answered');
    expect(received).toEqual(['sampling/createMessage']);
  });

  it('refuses URL-mode elicitation to a client that declared form mode only (-32602), and relays form mode', async () => {
    const { client, received } = await spiedClient('2025', { elicitation: { form: {} } });
    expect(await ask(client, 'spy', { method: 'elicitation/create', mode: 'url' })).toBe('refused -32602');
    expect(received).toEqual([]);
    expect(await ask(client, 'spy', { method: 'elicitation/create', mode: 'form' })).toBe('answered');
    expect(received).toEqual(['elicitation/create']);
  });

  it('refuses tool-enabled sampling to a client that did not declare sampling.tools (-32602)', async () => {
    const { client, received } = await spiedClient('2025', { sampling: {} });
    expect(await ask(client, 'spy', { method: 'sampling/createMessage', tools: true })).toBe('refused -32602');
    expect(received).toEqual([]);
  });

  it('shows a capability-tailored tool only to the client whose capabilities it needs', async () => {
    const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);
    const plain = await spiedClient('2025', {});
    const sampler = await spiedClient('2025', { sampling: {} });
    // Before a session's first call its lists come from the primary, which declares nothing.
    expect(await names(sampler.client)).not.toContain('spy__needs_sampling');
    await whoami(plain.client, 'spy');
    await whoami(sampler.client, 'spy');
    expect(await names(plain.client)).not.toContain('spy__needs_sampling');
    expect(await names(sampler.client)).toContain('spy__needs_sampling');
  });
});

describe("2026-era lists follow the request's capabilities", () => {
  const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name);

  it('lists a capability-tailored tool to the 2026 client that declared what it needs, and only to it', async () => {
    const plain = await spiedClient('2026', {});
    const sampler = await spiedClient('2026', { sampling: {} });
    expect(await names(sampler.client)).toContain('spy__needs_sampling');
    expect(await names(plain.client)).not.toContain('spy__needs_sampling');
    // What the client sees listed it can call (through a pooled connection); what it does not, it cannot.
    expect(textOf(await sampler.client.callTool({ name: 'spy__needs_sampling', arguments: {} }))).toBe('sampling client');
    expect((await errorOf(plain.client.callTool({ name: 'spy__needs_sampling', arguments: {} }))).message).toMatch(/Unknown tool/);
  });

  it('lists from a connection initialised with exactly the part of the capabilities a pooled connection honours', async () => {
    const before = spyLog('spy.jsonl').length;
    const { client } = await spiedClient('2026', { sampling: { tools: {} }, roots: { listChanged: true }, experimental: { x: {} } });
    await names(client);
    const opened = spyLog('spy.jsonl').slice(before).filter((entry) => entry.event === 'initialize');
    expect(opened.map((entry) => entry.capabilities)).toContainEqual({ sampling: {}, roots: {} });
    // The same set again reuses that connection: nothing new is initialised for it.
    const after = spyLog('spy.jsonl').length;
    const again = await spiedClient('2026', { roots: {}, sampling: {} });
    await names(again.client);
    expect(spyLog('spy.jsonl').slice(after).filter((entry) => entry.event === 'initialize')).toEqual([]);
  });
});

describe('connections no single client owns', () => {
  it('a pooled connection (2026 client, 2025-era upstream) declares only what a lease can relay', async () => {
    const { client } = await spiedClient('2026', {});
    expect((await whoami(client, 'spy')).initialize).toEqual(POOLED);
  });

  it('a shared 2025-era connection declares no client capabilities at all', async () => {
    const { client } = await spiedClient('2025', { sampling: {}, roots: { listChanged: true } });
    expect((await whoami(client, 'sharedspy')).initialize).toEqual({});
  });

  it.each(ASKS)('a 2026 client that declared nothing is not asked for %s through a pooled connection', async (method) => {
    const { client, received } = await spiedClient('2026', {});
    expect(await ask(client, 'spy', { method })).toBe('refused -32601');
    expect(received).toEqual([]);
  });

  it('a 2026 client that declared sampling gets the pooled upstream’s request, as an input round', async () => {
    const { client, received } = await spiedClient('2026', { sampling: {} });
    expect(await ask(client, 'spy', { method: 'sampling/createMessage' })).toBe('answered');
    expect(received).toEqual(['sampling/createMessage']);
  });

  it.each([
    ['pooled', 'web'],
    ['shared', 'sharedweb'],
  ])('a %s 2026-era connection carries each 2026 request’s own client capabilities', async (_kind, server) => {
    const sampler = await spiedClient('2026', { sampling: {} });
    const plain = await spiedClient('2026', {});
    const first = await whoami(sampler.client, server);
    expect(first.era).toBe('2026');
    expect(first.perRequest).toEqual({ sampling: {} });
    expect((await whoami(plain.client, server)).perRequest).toEqual({});
  });

  it('a shared 2026-era connection carries a 2025 session’s declared capabilities on each of its requests', async () => {
    const roots = await spiedClient('2025', { roots: {} });
    const plain = await spiedClient('2025', {});
    expect((await whoami(roots.client, 'sharedweb')).perRequest).toEqual({ roots: {} });
    expect((await whoami(plain.client, 'sharedweb')).perRequest).toEqual({});
  });

  it('a 2026-era upstream told that a 2025 client declared nothing refuses its own input request (-32021); the client is never asked', async () => {
    const { client, received } = await spiedClient('2025', {});
    const error = await errorOf(client.callTool({ name: 'sharedweb__ask_client', arguments: { method: 'roots/list' } }));
    expect(error).toMatchObject({ code: -32021 });
    expect(received).toEqual([]);
  });

  it('a 2025 client that declared roots answers a 2026-era upstream’s input request through the gateway', async () => {
    const { client, received } = await spiedClient('2025', { roots: {} });
    expect(await ask(client, 'sharedweb', { method: 'roots/list' })).toBe('answered');
    expect(received).toEqual(['roots/list']);
  });
});
