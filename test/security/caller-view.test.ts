/**
 * What a caller may not see, it sees nowhere: a real gateway with two bearer principals — `alice`,
 * whose access rules hide the server `secretive`, and `ops`, the policy's one admin — walked
 * surface by surface, in both eras where a surface has both. Every answer alice gets is searched
 * for the hidden name: handshakes (instructions, serverInfo, capabilities), its side channel, tool lists (deferral on, so the meta-tools' schemas too), search results,
 * resources, templates, prompts, `portcullis://agents`, an agent endpoint, `/readyz`, `/metrics`,
 * the customisation list and its watch stream, the admin page. `ops` sees the name on the same
 * surfaces, so each search could find it.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { connectClient, ERAS, type Era } from '../integration/harness/clients.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { bearerPrincipals, policyFile, startGatewayFor } from '../integration/harness/principals.js';
import { rawRequest } from '../integration/harness/raw-http.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup } from '../integration/harness/wait.js';
import { openWatch } from '../customizations/watch-reader.js';
import { tempDir, writeTree } from '../plugins/plugin-test-helpers.js';

const HIDDEN = 'secretive';
const principals = bearerPrincipals('alice', 'ops');
const gatewayLife = new Cleanup();
const perTest = new Cleanup();
afterEach(() => perTest.run());
afterAll(async () => {
  await gatewayLife.run();
  killAllStdioChildren();
});

let gateway: RunningGateway;
let root: string;

beforeAll(async () => {
  assertBuilt();
  const agents = writeTree(tempDir('portcullis-caller-view-agents-'), {
    'helper.md': `---\nname: helper\ndescription: Helps\ntools: [open__test_simple_text, ${HIDDEN}__test_simple_text, ${HIDDEN}__*]\n---\nYou help.\n`,
    // Every tool of this one is on the hidden server, and its system prompt names one.
    'keeper.md': `---\nname: keeper\ndescription: Keeps the vault\ntools: [${HIDDEN}__*]\n---\nCall ${HIDDEN}__test_simple_text first.\n`,
  });
  const policy = policyFile({ admins: ['ops'], access: { default: 'allow', rules: [{ principals: ['alice'], effect: 'deny', servers: [HIDDEN] }] } });
  gateway = await startGatewayFor(
    gatewayLife,
    principals,
    { open: stdioServer(newMarker(), { isolation: 'shared' }), [HIDDEN]: stdioServer(newMarker(), { isolation: 'shared' }) },
    { policy, agents: path.resolve(agents), catalogue: { deferTools: true } },
  );
  root = gateway.url.replace(/\/mcp$/, '');
}, 60_000);

/** Every MCP answer of one caller on `url`, by surface, as JSON text. */
async function mcpAnswers(url: string, as: string, era: Era): Promise<Record<string, string>> {
  const { client } = await connectClient(perTest, url, era, { headers: principals.headers(as) });
  const answers: Record<string, string> = {};
  // The handshake (initialize, or server/discover for 2026): instructions, serverInfo, capabilities.
  answers['handshake'] = JSON.stringify({ instructions: client.getInstructions(), serverInfo: client.getServerVersion(), capabilities: client.getServerCapabilities() });
  const tools = await client.listTools();
  answers['tools/list'] = JSON.stringify(tools);
  answers['search_tools'] = JSON.stringify(await client.callTool({ name: 'search_tools', arguments: { query: 'simple text', limit: 20 } }));
  answers['resources/list'] = JSON.stringify(await client.listResources());
  answers['resources/templates/list'] = JSON.stringify(await client.listResourceTemplates());
  answers['prompts/list'] = JSON.stringify(await client.listPrompts());
  return answers;
}

async function agentsResource(as: string, era: Era): Promise<string> {
  const { client } = await connectClient(perTest, gateway.url, era, { headers: principals.headers(as) });
  return JSON.stringify(await client.readResource({ uri: 'portcullis://agents' }));
}

const serverEnum = (toolsJson: string): unknown => {
  const search = (JSON.parse(toolsJson) as { tools: Array<{ name: string; inputSchema: { properties: { server?: { enum?: unknown } } } }> }).tools.find((t) => t.name === 'search_tools');
  return search?.inputSchema.properties.server?.enum;
};

describe.each(ERAS)('a caller whose rules hide a server, on the MCP surfaces of a %s client', (era) => {
  it('names it in no list, search, schema or resource of the aggregate endpoint, while the admin sees it there', async () => {
    const alice = await mcpAnswers(gateway.url, 'alice', era);
    for (const [surface, answer] of Object.entries(alice)) expect(answer, surface).not.toContain(HIDDEN);
    expect(serverEnum(alice['tools/list']!)).toEqual(['open']);
    const ops = await mcpAnswers(gateway.url, 'ops', era);
    expect(serverEnum(ops['tools/list']!)).toEqual(['open', HIDDEN]);
    expect(ops.search_tools).toContain(`${HIDDEN}__test_simple_text`);
    expect(ops.handshake).toContain(`## ${HIDDEN}`); // its instructions, labelled, for a caller who may see it
  });

  it("reads portcullis://agents without the agents' tools that name the hidden server, as its customisation list shows them", async () => {
    const alice = await agentsResource('alice', era);
    expect(alice).toContain('helper');
    expect(alice).not.toContain(HIDDEN);
    expect(await agentsResource('ops', era)).toContain(`${HIDDEN}__test_simple_text`);
  });

  it('offers no agent whose every tool the rules hide: not in prompts/list or portcullis://agents, its prompt answered like an unknown one, its endpoint 404', async () => {
    const { client } = await connectClient(perTest, gateway.url, era, { headers: principals.headers('alice') });
    const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(prompts).toContain('agent:helper');
    expect(prompts).not.toContain('agent:keeper');
    const unknown = await client.getPrompt({ name: 'agent:no-such-agent' }).then(() => 'served', (error: Error) => error.message);
    const keeper = await client.getPrompt({ name: 'agent:keeper' }).then((result) => JSON.stringify(result), (error: Error) => error.message);
    expect(keeper).not.toContain(HIDDEN);
    expect(keeper.replace('agent:keeper', 'agent:no-such-agent')).toBe(unknown);
    expect(await agentsResource('alice', era)).not.toContain('keeper');
    const endpoint = await rawRequest(`${gateway.url}/agents/keeper`, { method: 'POST', headers: { ...principals.headers('alice'), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
    expect(endpoint.status).toBe(404);
    // The admin is offered it on every one of those surfaces.
    const { client: ops } = await connectClient(perTest, gateway.url, era, { headers: principals.headers('ops') });
    expect((await ops.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('agent:keeper');
    expect(JSON.stringify(await ops.getPrompt({ name: 'agent:keeper' }))).toContain(`${HIDDEN}__test_simple_text`);
    expect(await agentsResource('ops', era)).toContain('keeper');
  });

  it("offers on an agent's endpoint only the servers of the agent's list it may see", async () => {
    const alice = await mcpAnswers(`${gateway.url}/agents/helper`, 'alice', era);
    for (const [surface, answer] of Object.entries(alice)) expect(answer, `agent ${surface}`).not.toContain(HIDDEN);
    expect(serverEnum(alice['tools/list']!)).toEqual(['open']);
  });
});

describe('a side channel of a server the caller may not see', () => {
  it('does not exist for that caller (404, as an unknown name), and does for the admin', async () => {
    const initialize = (as: string, server: string) =>
      rawRequest(`${gateway.url}/servers/${server}`, {
        headers: { ...principals.headers(as), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      });
    const hidden = await initialize('alice', HIDDEN);
    const unknown = await initialize('alice', 'no-such-server');
    expect(hidden.status).toBe(404);
    expect(hidden.status).toBe(unknown.status);
    expect(hidden.body).not.toContain(HIDDEN);
    expect((await initialize('ops', HIDDEN)).status).toBe(200);
  });
});

describe('a caller whose rules hide a server, on the HTTP surfaces', () => {
  it('finds the name in none of /readyz, /metrics, the customisation list, its watch stream or the admin page', async () => {
    const get = (url: string, as: string) => rawRequest(url, { method: 'GET', headers: principals.headers(as) });
    const readyz = await get(`${root}/readyz`, 'alice');
    expect(readyz.status).toBe(200);
    const metrics = await get(`${root}/metrics`, 'alice');
    expect(metrics.status).toBe(403);
    const list = await get(`${gateway.url}/customizations`, 'alice');
    expect(list.status).toBe(200);
    const admin = await get(`${gateway.url}/admin`, 'alice');
    expect(admin.status).toBe(403);
    const adminStatus = await get(`${gateway.url}/admin/status`, 'alice');
    expect(adminStatus.status).toBe(403);
    const watch = await openWatch(`${gateway.url}/customizations`, principals.headers('alice'));
    perTest.add(() => watch.close());
    const watched = JSON.stringify(await watch.next());
    for (const [surface, body] of Object.entries({ readyz: readyz.body, metrics: metrics.body, list: list.body, watched, admin: admin.body, adminStatus: adminStatus.body })) {
      expect(body, surface).not.toContain(HIDDEN);
    }
    // The admin sees it on the same routes: each search above could have found it.
    for (const url of [`${root}/readyz`, `${root}/metrics`, `${gateway.url}/customizations`, `${gateway.url}/admin/status`]) {
      expect((await get(url, 'ops')).body, url).toContain(HIDDEN);
    }
  });
});
