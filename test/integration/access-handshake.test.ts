/**
 * What a caller's access rules hide, no handshake names: one real gateway (the stdio and HTTP
 * fixtures, each with its own instructions, and a gateway agent), two bearer principals — `wide`
 * sees everything, `narrow` is denied the server `http` — driven by SDK clients of both eras and by
 * raw requests. The aggregate's and an agent endpoint's `initialize` / `server/discover` carry only
 * the instructions of servers the caller sees; the hidden server's side channel answers `narrow`
 * exactly like a server that is not configured, on both transports, and so does an agent endpoint
 * that offers `narrow` none of its tools.
 *
 * Also the two handshake and wire defects found from outside: the aggregate declares `prompts`
 * (and `resources`) when the gateway's own agent prompt exists beside tools-only upstreams, and a
 * resource that does not exist (or is hidden) is -32002 for a 2025 client and -32602 for a 2026
 * one (SEP-2164), both with `data.uri`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import {
  assertBuilt,
  bearerPrincipals,
  Cleanup,
  connectClient,
  ERAS,
  errorOf,
  initializeBody,
  MCP_POST_HEADERS,
  messagesOf,
  MODERN_VERSION,
  rawRequest,
  startCatalogueUpstream,
  startGatewayFor,
  startUpstreams,
} from './harness.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const principals = bearerPrincipals('wide', 'narrow');
let dir: string;
let gateway: RunningGateway;
/** Tools-only upstreams (the search catalogue's) and one gateway agent: nothing but the agent offers prompts. */
let toolsOnly: RunningGateway;

const POLICY = {
  access: { default: 'allow', rules: [{ name: 'narrow-without-http', principals: ['narrow'], effect: 'deny', servers: ['http'] }] },
  legacySse: { inbound: true },
};

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-access-handshake-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
  const agents = join(dir, 'agents');
  mkdirSync(agents);
  writeFileSync(join(agents, 'helper.md'), '---\nname: helper\ndescription: Helps\n---\nYou help.\n');
  // Offers the hidden server's tools only.
  writeFileSync(join(agents, 'http-only.md'), '---\nname: http-only\ntools: http__*\n---\nYou use http.\n');
  const upstreams = await startUpstreams(perFile);
  gateway = await startGatewayFor(perFile, principals, upstreams.servers(), { policy: join(dir, 'policy.json'), agents });
  const catalogue = await startCatalogueUpstream(perFile, ['brave']);
  toolsOnly = await startGatewayFor(perFile, principals, catalogue.servers(), { agents });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const as = (principal: string) => ({ headers: principals.headers(principal) });

describe.each(ERAS)('handshakes built per access view, %s era', (era) => {
  it("names a hidden server's instructions to nobody it is hidden from, on the aggregate", async () => {
    const wide = await connectClient(perTest, gateway.url, era, as('wide'));
    const narrow = await connectClient(perTest, gateway.url, era, as('narrow'));
    expect(wide.client.getInstructions()).toContain('## http\n');
    expect(wide.client.getInstructions()).toContain('## stdio\n');
    expect(narrow.client.getInstructions()).toContain('## stdio\n');
    expect(narrow.client.getInstructions()).not.toContain('## http');
  });

  it('does the same on an agent endpoint, whose instructions lead with its body', async () => {
    const url = `${gateway.url}/agents/helper`;
    const wide = await connectClient(perTest, url, era, as('wide'));
    const narrow = await connectClient(perTest, url, era, as('narrow'));
    expect(wide.client.getInstructions()).toContain('## http\n');
    expect(narrow.client.getInstructions()?.startsWith('You help.')).toBe(true);
    expect(narrow.client.getInstructions()).not.toContain('## http');
  });
});

/** The first message of a raw handshake on `url` as `principal`: a 2025 initialize or a 2026 server/discover. */
function handshake(url: string, principal: string, era: '2025' | '2026') {
  const authorization = principals.headers(principal).Authorization!;
  if (era === '2025') return rawRequest(url, { headers: { ...MCP_POST_HEADERS, authorization }, body: initializeBody() });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  return rawRequest(url, {
    headers: { ...MCP_POST_HEADERS, authorization, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'server/discover' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } }),
  });
}

describe.each(ERAS)('the side channel of a hidden server, %s era', (era) => {
  it('answers the caller it is hidden from exactly like a server that is not configured', async () => {
    const hidden = await handshake(`${gateway.url}/servers/http`, 'narrow', era);
    const unknown = await handshake(`${gateway.url}/servers/no-such-server`, 'narrow', era);
    expect(hidden.status).toBe(404);
    expect({ status: hidden.status, body: hidden.body }).toEqual({ status: unknown.status, body: unknown.body });
    expect(hidden.body).not.toContain('Test fixture');
    // The same channel serves a caller that sees the server, and the visible one serves both.
    expect((await handshake(`${gateway.url}/servers/http`, 'wide', era)).status).toBe(200);
    expect((await handshake(`${gateway.url}/servers/stdio`, 'narrow', era)).status).toBe(200);
  });
});

describe.each(ERAS)('an agent endpoint whose every tool the caller cannot see, %s era', (era) => {
  it('answers that caller exactly like an agent that does not exist, and serves one that sees them', async () => {
    const hidden = await handshake(`${gateway.url}/agents/http-only`, 'narrow', era);
    const unknown = await handshake(`${gateway.url}/agents/no-such-agent`, 'narrow', era);
    expect(hidden.status).toBe(404);
    expect({ status: hidden.status, body: hidden.body }).toEqual({ status: unknown.status, body: unknown.body });
    expect(hidden.body).not.toContain('You use http.');
    expect((await handshake(`${gateway.url}/agents/http-only`, 'wide', era)).status).toBe(200);
    // An agent offering tools the caller does see exists for it.
    expect((await handshake(`${gateway.url}/agents/helper`, 'narrow', era)).status).toBe(200);
  });
});

describe('the side channel of a hidden server over HTTP+SSE (2024-11-05)', () => {
  it('is not found for the caller it is hidden from, and opens for one that sees it', async () => {
    const headers = (principal: string) => ({ accept: 'text/event-stream', authorization: principals.headers(principal).Authorization! });
    const refused = (principal: string, server: string) => rawRequest(`${gateway.url}/servers/${server}/sse`, { method: 'GET', headers: headers(principal) });
    const hidden = await refused('narrow', 'http');
    const unknown = await refused('narrow', 'no-such-server');
    expect(hidden.status).toBe(404);
    expect(hidden.body).toBe(unknown.body);
    // A stream that opens stays open: its status is read, then the stream is cut.
    const abort = new AbortController();
    const opened = await fetch(`${gateway.url}/servers/http/sse`, { headers: headers('wide'), signal: abort.signal });
    expect(opened.status).toBe(200);
    abort.abort();
  });
});

describe.each(ERAS)('the gateway’s own entries beside tools-only upstreams, %s era', (era) => {
  it("declares prompts and resources, so a client lists the agent's prompt and portcullis://agents", async () => {
    const { client } = await connectClient(perTest, toolsOnly.url, era, as('wide'));
    expect(client.getServerCapabilities()?.prompts).toBeDefined();
    expect(client.getServerCapabilities()?.resources).toBeDefined();
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name).sort()).toEqual(['agent:helper', 'agent:http-only']);
    expect((await client.listResources()).resources.map((resource) => resource.uri)).toContain('portcullis://agents');
  });
});

/** A raw `resources/read` of `uri` as `principal`: in a 2025 session opened for it, or one self-contained 2026 request. */
async function readRaw(url: string, principal: string, era: '2025' | '2026', uri: string): Promise<{ error?: { code: number; data?: unknown } }> {
  const authorization = principals.headers(principal).Authorization!;
  const read = (id: number, meta?: Record<string, unknown>) => JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/read', params: { uri, ...(meta === undefined ? {} : { _meta: meta }) } });
  if (era === '2026') {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const headers = { ...MCP_POST_HEADERS, authorization, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'resources/read', 'mcp-name': uri };
    return messagesOf(await rawRequest(url, { headers, body: read(2, meta) })).at(-1) as { error?: { code: number } };
  }
  const opened = await rawRequest(url, { headers: { ...MCP_POST_HEADERS, authorization }, body: initializeBody() });
  const session = opened.headers['mcp-session-id'] as string;
  const headers = { ...MCP_POST_HEADERS, authorization, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
  perTest.add(() => rawRequest(url, { method: 'DELETE', headers: { authorization, 'mcp-session-id': session } }).then(() => undefined));
  await rawRequest(url, { headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
  return messagesOf(await rawRequest(url, { headers, body: read(2) })).at(-1) as { error?: { code: number } };
}

describe.each(ERAS)('a resource that is not found, %s era', (era) => {
  it('is answered on the wire as this era’s revision says, with the URI in data', async () => {
    // Raw: the SDK client turns either code into one ResourceNotFoundError, which hides the wire.
    const uri = 'test://no-such-resource';
    const error = (await readRaw(gateway.url, 'narrow', era, uri)).error;
    expect(error).toMatchObject({ code: era === '2025' ? -32002 : -32602, data: { uri, code: 'UNKNOWN_RESOURCE' } });
    // And an SDK client of the era reads it as resource not found.
    const { client } = await connectClient(perTest, gateway.url, era, as('narrow'));
    expect(await errorOf(client.readResource({ uri }))).toMatchObject({ data: { uri } });
  });
});
