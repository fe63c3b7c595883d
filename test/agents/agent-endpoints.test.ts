/**
 * Agent endpoints on a real gateway (a stdio conformance server, the demo's dice-kit plugin, a
 * disabled plugin and a gateway-level agents directory), driven by the SDK client of both eras:
 * the catalogue is the agent's allowlist ∩ what the gateway shows, a call outside it answers
 * exactly like an unknown tool, the instructions are the agent's body, and a disabled, skipped or
 * unknown agent answers 404. On the aggregate endpoint, agents a user may invoke are prompts and
 * `portcullis://agents` lists them all.
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { killAllStdioChildren } from '../../src/upstream/stdio-transport.js';
import { connectClient, ERAS, errorOf, textOf } from '../integration/harness/clients.js';
import { assertBuilt, newMarker, ROOT } from '../integration/harness/paths.js';
import { rawRequest } from '../integration/harness/raw-http.js';
import { stdioServer } from '../integration/harness/upstreams.js';
import { Cleanup } from '../integration/harness/wait.js';
import { tempDir, writeTree } from '../plugins/plugin-test-helpers.js';
import { startPluginGateway, whereamiEntry, writePlugin } from '../customizations/plugin-test-gateway.js';
import { initialize2025, modern } from './handshake.js';

const gatewayLife = new Cleanup();
const perTest = new Cleanup();
afterEach(() => perTest.run());
afterAll(async () => {
  await gatewayLife.run();
  killAllStdioChildren();
});

const agentFile = (front: string, body: string) => `---\n${front}\n---\n${body}\n`;

let gateway: RunningGateway;
let agentsDir: string;

beforeAll(async () => {
  assertBuilt();
  agentsDir = writeTree(tempDir('portcullis-agents-'), {
    'reviewer.md': agentFile('name: reviewer\ndescription: Reviews things\nmodel: claude-sonnet-4\ntools:\n  - conf__test_simple_text\n  - mcp__conf__test_error_handling', 'You review.'),
    'everything.md': agentFile('name: everything', 'You may use every tool.'),
    'globber.md': agentFile('name: globber\ntools: "conf__*, nope__missing"', 'Only conf.'),
    // The README's plugin-wide form: every server of the plugin dice-kit, and nothing else.
    'kit-wide.md': agentFile('name: kit-wide\ntools: dice-kit.*', 'Every dice-kit server.'),
    // Asks for a tool the config hides: an agent narrows, never widens.
    'greedy.md': agentFile('name: greedy\ntools: conf__test_image_content, conf__test_simple_text', 'Greedy.'),
    'hidden.md': agentFile('name: hidden\ndisable-user-invocation: true\ndisable-model-invocation: false', 'Not a prompt.'),
    'bad.md': agentFile('name: Not_Kebab', 'Skipped.'),
  });
  const quiet = writePlugin('quiet-kit', { where: whereamiEntry() }, { 'agents/helper.md': agentFile('name: helper', 'Disabled with its plugin.') });
  // A plugin whose name continues the demo plugin's with a dot: `dice-kit.*` must not cover it.
  const lookalike = writePlugin('dice-kit.evil', { where: whereamiEntry() });
  const started = await startPluginGateway(gatewayLife, {
    servers: { conf: stdioServer(newMarker(), { isolation: 'shared', disabledTools: ['test_image_content'] }) },
    plugins: [path.join(ROOT, 'demo/plugins/dice-kit'), { path: quiet, enabled: false }, lookalike],
    agents: agentsDir,
  });
  gateway = started.gateway;
}, 60_000);

const agentUrl = (name: string) => `${gateway.url}/agents/${name}`;

async function toolNames(url: string, era: '2025' | '2026'): Promise<string[]> {
  const { client } = await connectClient(perTest, url, era);
  return (await client.listTools()).tools.map((tool) => tool.name).sort();
}

describe.each(ERAS)('an agent endpoint seen by a %s client', (era) => {
  it("lists the demo plugin's agent with its one allowed tool, and the tool works", async () => {
    const { client } = await connectClient(perTest, agentUrl('dice-kit:game-master'), era);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['dice-kit.dice__roll']);
    const rolled = textOf(await client.callTool({ name: 'dice-kit.dice__roll', arguments: { count: 2, sides: 6 } }));
    expect(rolled).toMatch(/^\d \+ \d = \d+$/);
  });

  it('answers a call outside the allowlist exactly like a call of an unknown tool', async () => {
    const { client } = await connectClient(perTest, agentUrl('dice-kit:game-master'), era);
    const outside = await errorOf(client.callTool({ name: 'conf__test_simple_text', arguments: {} }));
    const unknown = await errorOf(client.callTool({ name: 'conf__no_such_tool', arguments: {} }));
    expect(outside.code).toBe(unknown.code);
    expect(outside.message.replace('conf__test_simple_text', 'X')).toBe(unknown.message.replace('conf__no_such_tool', 'X'));
    // The aggregate endpoint serves the very same tool.
    const { client: aggregate } = await connectClient(perTest, gateway.url, era);
    expect(textOf(await aggregate.callTool({ name: 'conf__test_simple_text', arguments: {} }))).not.toBe('');
  });

  it("keeps a plugin's * to that plugin: a plugin named dice-kit.evil is neither listed nor callable for dice-kit.*", async () => {
    const { client } = await connectClient(perTest, agentUrl('kit-wide'), era);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['dice-kit.dice__roll']);
    const crossed = await errorOf(client.callTool({ name: 'dice-kit.evil.where__whereami', arguments: {} }));
    expect(crossed).toMatchObject({ code: -32602, message: 'Unknown tool: dice-kit.evil.where__whereami' });
    // The aggregate endpoint serves it: the agent's list, not an absent server, is what refused it.
    const { client: aggregate } = await connectClient(perTest, gateway.url, era);
    expect(textOf(await aggregate.callTool({ name: 'dice-kit.evil.where__whereami', arguments: {} }))).not.toBe('');
  });

  it('accepts exposed names and the mcp__<server>__<tool> form, and <server>__* globs', async () => {
    expect(await toolNames(agentUrl('reviewer'), era)).toEqual(['conf__test_error_handling', 'conf__test_simple_text']);
    const globbed = await toolNames(agentUrl('globber'), era);
    expect(globbed.length).toBeGreaterThan(5);
    expect(globbed.every((name) => name.startsWith('conf__'))).toBe(true);
  });

  it('never widens: a tool the config hides stays hidden and uncallable for an agent that lists it', async () => {
    expect(await toolNames(agentUrl('greedy'), era)).toEqual(['conf__test_simple_text']);
    const { client } = await connectClient(perTest, agentUrl('greedy'), era);
    const hidden = await errorOf(client.callTool({ name: 'conf__test_image_content', arguments: {} }));
    expect(hidden.code).toBe(-32602);
    expect(hidden.message).toContain('Unknown tool');
  });

  it('lists every visible tool for an agent without a tools field', async () => {
    const all = await toolNames(gateway.url, era);
    expect(await toolNames(agentUrl('everything'), era)).toEqual(all);
    expect(all).not.toContain('conf__test_image_content');
  });

  it("answers with the agent's body as instructions, followed by the labelled server instructions, and its name", async () => {
    const { client } = await connectClient(perTest, agentUrl('dice-kit:game-master'), era);
    const instructions = client.getInstructions() ?? '';
    expect(instructions.startsWith('You are a game master.')).toBe(true);
    expect(instructions).toContain('## dice-kit.dice\nRolls dice.');
    expect(client.getServerVersion()?.name).toBe('dice-kit:game-master');
  });
});

describe('agent handshakes on the wire', () => {
  it("carries the agent's model and announced URL in the initialize result's _meta (2025)", async () => {
    const { result } = await initialize2025(perTest, agentUrl('reviewer'));
    expect(result?.serverInfo?.name).toBe('reviewer');
    expect(result?.instructions?.startsWith('You review.\n\n## conf\n')).toBe(true);
    expect(result?._meta).toMatchObject({ 'portcullis/model': 'claude-sonnet-4', 'portcullis/server': { name: 'reviewer', url: agentUrl('reviewer') } });
  });

  it('carries them in the server/discover result too (2026)', async () => {
    const { result } = await modern(agentUrl('reviewer'), 'server/discover');
    expect(result?.instructions?.startsWith('You review.\n\n## conf\n')).toBe(true);
    expect(result?._meta).toMatchObject({ 'portcullis/model': 'claude-sonnet-4', 'portcullis/server': { url: agentUrl('reviewer') } });
    expect((result?._meta?.['io.modelcontextprotocol/serverInfo'] as { name?: string } | undefined)?.name).toBe('reviewer');
  });

  it('accepts the namespaced name percent-encoded in its path segment', async () => {
    const { result } = await initialize2025(perTest, `${gateway.url}/agents/dice-kit%3Agame-master`);
    expect(result?.serverInfo?.name).toBe('dice-kit:game-master');
  });

  it('keeps the allowlist under deferral: search_tools finds nothing outside it and call_tool of it is an unknown tool', async () => {
    const url = agentUrl('dice-kit:game-master');
    const listed = await modern(url, 'tools/list', {}, { deferTools: true });
    expect(((listed.result as { tools: Array<{ name: string }> } | undefined)?.tools ?? []).map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    const found = await modern(url, 'tools/call', { name: 'search_tools', arguments: { query: 'test_simple_text', limit: 20 } }, { deferTools: true });
    expect(JSON.stringify(found.result)).not.toContain('conf__');
    expect(JSON.stringify(found.result)).not.toContain('notes');
    const called = await modern(url, 'tools/call', { name: 'call_tool', arguments: { name: 'conf__test_simple_text', arguments: {} } }, { deferTools: true });
    expect(called.error).toMatchObject({ code: -32602, message: 'Unknown tool: conf__test_simple_text' });
    const roll = await modern(url, 'tools/call', { name: 'call_tool', arguments: { name: 'dice-kit.dice__roll', arguments: {} } }, { deferTools: true });
    expect(JSON.stringify(roll.result)).toMatch(/= \d/);
  });

  it('adds no data tools to an agent endpoint, whatever dataMode the client asks for', async () => {
    const listed = await modern(agentUrl('reviewer'), 'tools/list', {}, { dataMode: 'tools' });
    expect(((listed.result as { tools: Array<{ name: string }> } | undefined)?.tools ?? []).map((t) => t.name).sort()).toEqual(['conf__test_error_handling', 'conf__test_simple_text']);
    const read = await modern(agentUrl('reviewer'), 'tools/call', { name: 'conf__read_resource', arguments: { uri: 'test://static-text' } }, { dataMode: 'tools' });
    expect(read.error?.message).toBe('Unknown tool: conf__read_resource');
  });

  it.each([
    ['an agent of a disabled plugin', 'quiet-kit:helper'],
    ['an agent file that failed validation', 'Not_Kebab'],
    ['an unknown agent', 'nobody'],
  ])('answers 404 for %s', async (_what, name) => {
    const response = await rawRequest(agentUrl(name), {
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(response.status).toBe(404);
  });
});

describe.each(ERAS)('agents on the aggregate endpoint for a %s client', (era) => {
  it('offers each agent a user may invoke as a prompt agent:<name> whose prompts/get is the system prompt', async () => {
    const { client } = await connectClient(perTest, gateway.url, era);
    const names = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
    expect(names).toEqual(expect.arrayContaining(['agent:reviewer', 'agent:everything', 'agent:globber', 'agent:kit-wide', 'agent:dice-kit:game-master']));
    expect(names).not.toContain('agent:hidden'); // disable-user-invocation
    expect(names).not.toContain('agent:quiet-kit:helper'); // its plugin is disabled
    const got = await client.getPrompt({ name: 'agent:dice-kit:game-master' });
    expect(got.description).toBe('Runs tabletop games and rolls the dice for them');
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: expect.stringMatching(/^You are a game master\./) } }]);
    const refused = await errorOf(client.getPrompt({ name: 'agent:hidden' }));
    expect(refused.message).toContain('Unknown prompt');
  });

  it('lists every agent as an AgentCustomization in portcullis://agents', async () => {
    const { client } = await connectClient(perTest, gateway.url, era);
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain('portcullis://agents');
    const read = await client.readResource({ uri: 'portcullis://agents' });
    const { items } = JSON.parse((read.contents[0] as { text: string }).text) as { items: Array<Record<string, unknown>> };
    const byName = new Map(items.map((item) => [item.name, item]));
    expect([...byName.keys()].sort()).toEqual(['dice-kit:game-master', 'everything', 'globber', 'greedy', 'hidden', 'kit-wide', 'quiet-kit:helper', 'reviewer']);
    expect(byName.get('reviewer')).toMatchObject({
      type: 'agent',
      description: 'Reviews things',
      model: 'claude-sonnet-4',
      tools: ['conf__test_simple_text', 'mcp__conf__test_error_handling'],
      uri: expect.stringMatching(/^file:\/\/.*\/reviewer\.md$/),
    });
    expect(byName.get('reviewer')).not.toHaveProperty('range');
    expect(byName.get('hidden')).toMatchObject({ disableUserInvocation: true, disableModelInvocation: false });
    expect(byName.get('quiet-kit:helper')).toMatchObject({ enabled: false });
    expect(byName.get('reviewer')).not.toHaveProperty('enabled');
  });
});

describe('agents in the customisation list', () => {
  it("lists the gateway's own agents at the top level and plugin agents as plugin children, with the same ids as the resource", async () => {
    const list = (await rawRequest(`${gateway.url}/customizations`, { method: 'GET' })).json() as unknown as { items: Array<Record<string, unknown>> };
    const topAgents = list.items.filter((item) => item.type === 'agent').map((item) => item.name);
    expect(topAgents).toEqual(['everything', 'globber', 'greedy', 'hidden', 'kit-wide', 'reviewer']);
    const dice = list.items.find((item) => item.name === 'dice-kit') as { children: Array<Record<string, unknown>> };
    const child = dice.children.find((c) => c.type === 'agent');
    expect(child).toMatchObject({ name: 'dice-kit:game-master', tools: ['dice-kit.dice__roll'] });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    const read = await client.readResource({ uri: 'portcullis://agents' });
    const { items } = JSON.parse((read.contents[0] as { text: string }).text) as { items: Array<Record<string, unknown>> };
    expect(items.find((item) => item.name === 'dice-kit:game-master')?.id).toBe(child?.id);
  });
});

describe('a disabled or missing agents directory', () => {
  const own = new Cleanup();
  afterAll(() => own.run());

  it('lists a disabled directory’s agents with enabled: false, serves none of them, and offers no prompt', async () => {
    const dir = writeTree(tempDir('portcullis-agents-off-'), { 'solo.md': agentFile('name: solo', 'Alone.') });
    const { gateway: off } = await startPluginGateway(own, { agents: { path: dir, enabled: false } });
    const list = (await rawRequest(`${off.url}/customizations`, { method: 'GET' })).json() as unknown as { items: Array<Record<string, unknown>> };
    expect(list.items).toEqual([expect.objectContaining({ type: 'agent', name: 'solo', enabled: false })]);
    const response = await rawRequest(`${off.url}/agents/solo`, { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(response.status).toBe(404);
    const { client } = await connectClient(perTest, off.url, '2026');
    const read = await client.readResource({ uri: 'portcullis://agents' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ items: [{ name: 'solo', enabled: false }] });
  });

  it('starts without agents when the configured directory does not exist', async () => {
    const { gateway: none } = await startPluginGateway(own, { agents: path.join(tempDir('portcullis-agents-gone-'), 'missing') });
    const list = (await rawRequest(`${none.url}/customizations`, { method: 'GET' })).json() as unknown as { items: unknown[] };
    expect(list.items).toEqual([]);
  });
});
