/**
 * The policy's `access` rules judge every request by its own token, on every surface, through a
 * real gateway with JWT authentication (a local signing key):
 * - a 2025 session opened with one token of a principal and then used with another token of the
 *   same principal (other `groups`) lists and calls by the later token's claims, hears
 *   `list_changed` when its visible set changes, and never gets a list built for the other profile;
 *   another principal presenting the session id learns nothing (404);
 * - the customisation resource is offered only while the session's latest token hides nothing;
 * - `/readyz` names only the servers the caller may see (all of them for an admin);
 * - the customisation list (`GET <path>/customizations`, and its `?watch=1` stream) names only
 *   the servers the caller may see.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { assertBuilt, Cleanup, rawRequest, startTestGateway, startUpstreams, textOf, within } from './harness.js';
import { collectNotifications } from './harness/clients.js';
import { localJwtIssuer, type LocalJwtIssuer } from './harness/local-jwt.js';
import { listOf } from '../customizations/enablement-helpers.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const ISSUER = 'https://idp.test';
const AUDIENCE = 'portcullis-access-per-request';
let dir: string;
let issuer: LocalJwtIssuer;
let gateway: RunningGateway;

const POLICY = {
  admins: ['root'],
  access: {
    default: 'deny',
    rules: [
      { name: 'eng-everything', claims: { groups: ['eng'] }, effect: 'allow' },
      { name: 'sales-stdio', claims: { groups: ['sales'] }, effect: 'allow', servers: ['stdio'] },
    ],
  },
};

async function bearer(sub: string, groups: string[]): Promise<string> {
  const jwt = await issuer.token(sub, groups);
  return `Bearer ${jwt}`;
}

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-access-per-request-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  issuer = await localJwtIssuer(dir, ISSUER, AUDIENCE);
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
  const upstreams = await startUpstreams(perFile);
  gateway = await startTestGateway(perFile, upstreams.servers(), {
    policy: join(dir, 'policy.json'),
    auth: issuer.auth,
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const names = (items: Array<{ name: string }>) => items.map((item) => item.name).sort();
const CUSTOMIZATIONS = 'portcullis://customizations';

/**
 * A 2025 SDK client whose every HTTP request carries `token.current` (one session, tokens swapped
 * between requests as a client does when its token is refreshed with other claims).
 */
async function sessionWithToken(initial: string, url = gateway.url) {
  const token = { current: initial };
  const client = new Client({ name: 'token-swap', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: (url, init) => {
      const headers = new Headers(init?.headers);
      headers.set('authorization', token.current);
      return fetch(url, { ...init, headers });
    },
  });
  await within(client.connect(transport), 15_000, 'client connect');
  perTest.add(async () => {
    await within(transport.terminateSession(), 5_000, 'DELETE').catch(() => undefined);
    await within(client.close(), 5_000, 'client close').catch(() => undefined);
  });
  return { client, transport, token };
}

describe('a 2025 session used with another token of the same principal', () => {
  it("lists and calls by each request's own token, and tells the session when what it sees changes", async () => {
    const eng = await bearer('kate', ['eng']);
    const sales = await bearer('kate', ['sales']);
    const { client, transport, token } = await sessionWithToken(eng);
    const changed = collectNotifications(client, 'notifications/tools/list_changed');
    // Opened as eng: both servers' tools, and the eng list is built (and cached) first.
    const engTools = names((await client.listTools()).tools);
    expect(engTools).toEqual(expect.arrayContaining(['stdio__echo', 'http__echo']));
    expect(textOf(await client.callTool({ name: 'http__echo', arguments: { text: 'as eng' } }))).toContain('as eng');

    // The same principal, now only in sales: the session's requests are judged by that token.
    token.current = sales;
    const salesTools = names((await client.listTools()).tools);
    expect(salesTools).toContain('stdio__echo');
    expect(salesTools.some((name) => name.startsWith('http__'))).toBe(false);
    await expect(client.callTool({ name: 'http__echo', arguments: { text: 'as sales' } })).rejects.toMatchObject({ code: -32602 });
    expect(textOf(await client.callTool({ name: 'stdio__echo', arguments: { text: 'still' } }))).toContain('still');
    await changed.waitFor(1);

    // Back to eng: the eng view again, never a list of the sales profile.
    token.current = eng;
    // (The session's own http connection, opened by the call above, lists a few tools more.)
    expect(names((await client.listTools()).tools)).toEqual(expect.arrayContaining(engTools));
    await changed.waitFor(2);

    // Another principal presenting the session id learns nothing: exactly an unknown session.
    const bob = await rawRequest(gateway.url, {
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: await bearer('bob', ['eng']),
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
    });
    expect(bob.status).toBe(404);
  });
});

describe('the customisation resource of a session whose token changes', () => {
  it('is offered while the latest token is one nothing is hidden from, and neither listed nor read once a narrowed one arrives', async () => {
    // Nothing matches a caller without groups (default allow): that caller is unrestricted.
    writeFileSync(join(dir, 'open-policy.json'), JSON.stringify({ access: { default: 'allow', rules: [{ name: 'sales-no-http', claims: { groups: ['sales'] }, effect: 'deny', servers: ['http'] }] } }));
    const upstreams = await startUpstreams(perTest);
    const open = await startTestGateway(perTest, upstreams.servers(), {
      policy: join(dir, 'open-policy.json'),
      auth: issuer.auth,
    });
    const { client, token } = await sessionWithToken(await bearer('kate', []), open.url);
    const uris = async () => (await client.listResources()).resources.map((r) => r.uri);
    expect(await uris()).toContain(CUSTOMIZATIONS);
    const [content] = (await client.readResource({ uri: CUSTOMIZATIONS })).contents as Array<{ text: string }>;
    expect((JSON.parse(content!.text) as { items: Array<{ name: string }> }).items.map((i) => i.name)).toContain('http');
    token.current = await bearer('kate', ['sales']);
    expect(await uris()).not.toContain(CUSTOMIZATIONS);
    await expect(client.readResource({ uri: CUSTOMIZATIONS })).rejects.toMatchObject({ message: expect.stringMatching(/not found/i) });
  });
});

const origin = () => new URL(gateway.url).origin;

async function readyzAs(authorization: string) {
  const response = await rawRequest(`${origin()}/readyz`, { method: 'GET', headers: { authorization } });
  return { status: response.status, body: response.json() as { status: string; servers: Array<{ server: string }> } };
}

describe('/readyz', () => {
  it('names only the servers the caller may see, all of them for an admin, with the same status for all', async () => {
    const eng = await readyzAs(await bearer('kate', ['eng']));
    const sales = await readyzAs(await bearer('sam', ['sales']));
    const nobody = await readyzAs(await bearer('vic', ['visitors']));
    const admin = await readyzAs(await bearer('root', []));
    const servers = (answer: typeof eng) => answer.body.servers.map((s) => s.server).sort();
    expect(servers(eng)).toEqual(['http', 'stdio']);
    expect(servers(sales)).toEqual(['stdio']);
    expect(servers(nobody)).toEqual([]);
    expect(servers(admin)).toEqual(['http', 'stdio']);
    for (const answer of [sales, nobody, admin]) {
      expect(answer.status).toBe(eng.status);
      expect(answer.body.status).toBe(eng.body.status);
    }
  });
});

/** The first `customizationsChanged` event of a watch as `authorization`. */
async function firstWatchEvent(authorization: string): Promise<{ items: Array<{ name: string }> }> {
  const abort = new AbortController();
  perTest.add(() => abort.abort());
  const response = await fetch(`${gateway.url}/customizations?watch=1`, { headers: { authorization }, signal: abort.signal });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (let reads = 0; reads < 100 && !text.includes('\n\n'); reads++) {
    const { value, done } = await within(reader.read(), 10_000, 'the first watch event');
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  const data = text.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data!.slice(6)) as { items: Array<{ name: string }> };
}

describe('the customisation list', () => {
  it('names only the servers the caller may see, read or watched', async () => {
    const eng = await bearer('kate', ['eng']);
    const sales = await bearer('sam', ['sales']);
    const itemNames = (items: Array<{ name: string }>) => items.map((item) => item.name);
    expect(itemNames(await listOf(gateway.url, { authorization: eng }))).toEqual(expect.arrayContaining(['http', 'stdio']));
    const salesItems = itemNames(await listOf(gateway.url, { authorization: sales }));
    expect(salesItems).toContain('stdio');
    expect(salesItems).not.toContain('http');
    const watched = itemNames((await firstWatchEvent(sales)).items);
    expect(watched).toContain('stdio');
    expect(watched).not.toContain('http');
    expect(itemNames((await firstWatchEvent(eng)).items)).toEqual(expect.arrayContaining(['http', 'stdio']));
  });
});
