/**
 * Nothing pending is reachable through an agent endpoint (docs/security.md, "Tool integrity"): the
 * rug-pull fixture rewrites its tools while an agent's sessions are open, and under `hold` an
 * agent whose allowlist names the changed tool and the new one neither lists them nor relays a
 * call to them (TOOL_PENDING_APPROVAL, naming the tool), while an agent whose allowlist does not
 * name them answers a call exactly as for an unknown tool (a held tool is no news to an agent that
 * could never call it). With deferral on, the agent's `search_tools` does not find a pending tool
 * and its `call_tool` refuses it. Approved, the definition is listed, found and callable again.
 */
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  Cleanup,
  collectNotifications,
  connectClient,
  ERAS,
  errorOf,
  integrityDecision,
  integrityListing,
  REVIEWED,
  RUG_PULLED,
  scratchDir,
  startTestGateway,
  stdioRug,
  textOf,
  toolsFile,
  within,
  type Era,
} from '../integration/harness.js';
import { writeTree } from '../plugins/plugin-test-helpers.js';

const cleanup = new Cleanup();
beforeAll(() => assertBuilt());
afterEach(() => cleanup.run());

const agentFile = (name: string, tools: string[], body: string) => `---\nname: ${name}\ntools:\n${tools.map((t) => `  - ${t}`).join('\n')}\n---\n${body}\n`;

async function gatewayWithAgents(extra: Record<string, unknown> = {}) {
  const dir = scratchDir(cleanup);
  const agents = writeTree(join(dir, 'agents'), {
    'noter.md': agentFile('noter', ['notes__add_note', 'notes__sync_notes', 'notes__publish'], 'You keep notes.'),
    'reader.md': agentFile('reader', ['notes__read_note', 'notes__publish'], 'You read notes.'),
  });
  const gateway = await startTestGateway(cleanup, { notes: stdioRug(toolsFile(dir, 'notes', REVIEWED)) }, { stateDir: join(dir, 'state'), toolIntegrity: { mode: 'hold' }, agents, ...extra });
  return { gateway, agentUrl: (name: string) => `${gateway.url}/agents/${name}` };
}

/** Publishes the rewritten tools through `client` and waits until it hears the list changed (a 2026 client on its listen stream). */
async function rugPull(client: Client, era: Era): Promise<void> {
  const changes = collectNotifications(client, 'notifications/tools/list_changed');
  if (era === '2026') {
    const subscription = await within(client.listen({ toolsListChanged: true }), 10_000, 'subscriptions/listen');
    cleanup.add(() => subscription.close().catch(() => undefined));
  }
  expect(textOf(await client.callTool({ name: 'notes__publish', arguments: { tools: RUG_PULLED } }))).toBe('published 3');
  await changes.waitFor(1);
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();

async function approve(url: string, tool: string): Promise<void> {
  const entry = (await integrityListing(url)).body.pending!.find((p) => p.tool === tool)!;
  expect((await integrityDecision(url, 'approve', { id: entry.id, hash: entry.hash })).status).toBe(200);
}

describe.each(ERAS)('an agent endpoint seen by a %s client under hold', (era) => {
  it('neither lists nor relays a pending tool its allowlist names, and serves it once approved', async () => {
    const { gateway, agentUrl } = await gatewayWithAgents();
    const { client: noter } = await connectClient(cleanup, agentUrl('noter'), era);
    const { client: reader } = await connectClient(cleanup, agentUrl('reader'), era);
    expect(await names(noter)).toEqual(['notes__add_note', 'notes__publish']);
    expect(textOf(await noter.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');

    await rugPull(noter, era);
    expect(await names(noter)).toEqual(['notes__publish']);
    for (const name of ['notes__add_note', 'notes__sync_notes']) {
      const refused = await errorOf(noter.callTool({ name, arguments: {} }));
      expect(refused.code, name).toBe(-32602);
      expect(refused.message, name).toMatch(new RegExp(`${name} .*awaits an admin's approval`));
      expect(refused.data, name).toMatchObject({ code: 'TOOL_PENDING_APPROVAL', tool: name });
    }

    // An agent that could never call it learns nothing of it: the answer of an unknown tool.
    expect(await names(reader)).toEqual(['notes__publish', 'notes__read_note']);
    const outside = await errorOf(reader.callTool({ name: 'notes__add_note', arguments: {} }));
    const unknown = await errorOf(reader.callTool({ name: 'notes__no_such_tool', arguments: {} }));
    expect(outside.code).toBe(unknown.code);
    expect(outside.message.replace('notes__add_note', 'X')).toBe(unknown.message.replace('notes__no_such_tool', 'X'));
    expect(outside.data).not.toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });

    await approve(gateway.url, 'add_note');
    expect(await names(noter)).toEqual(['notes__add_note', 'notes__publish']);
    expect(textOf(await noter.callTool({ name: 'notes__add_note', arguments: {} }))).toBe('called add_note');
    expect((await errorOf(noter.callTool({ name: 'notes__sync_notes', arguments: {} }))).data).toMatchObject({ code: 'TOOL_PENDING_APPROVAL' });
  });

  it("with deferral on, the agent's search_tools does not find a pending tool and its call_tool refuses it", async () => {
    const { gateway, agentUrl } = await gatewayWithAgents({ catalogue: { deferTools: true } });
    const { client } = await connectClient(cleanup, agentUrl('noter'), era);
    const search = async (query: string) => {
      const result = await client.callTool({ name: 'search_tools', arguments: { query, limit: 20 } });
      return ((result.structuredContent as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name).sort();
    };
    const viaCallTool = (name: string) => client.callTool({ name: 'call_tool', arguments: { name, arguments: {} } });
    expect(await search('adds a note')).toContain('notes__add_note');
    expect(textOf(await viaCallTool('notes__add_note'))).toBe('called add_note');

    const changes = collectNotifications(client, 'notifications/tools/list_changed');
    if (era === '2026') {
      const subscription = await within(client.listen({ toolsListChanged: true }), 10_000, 'subscriptions/listen');
      cleanup.add(() => subscription.close().catch(() => undefined));
    }
    // call_tool relays arguments: publish the rewritten tools through it.
    expect(textOf(await client.callTool({ name: 'call_tool', arguments: { name: 'notes__publish', arguments: { tools: RUG_PULLED } } }))).toBe('published 3');
    await changes.waitFor(1);

    for (const query of ['adds a note', 'note', 'ssh id_rsa', 'sync notes', 'syncs']) {
      const found = await search(query);
      expect(found, query).not.toContain('notes__add_note');
      expect(found, query).not.toContain('notes__sync_notes');
    }
    for (const name of ['notes__add_note', 'notes__sync_notes']) {
      expect((await errorOf(viaCallTool(name))).data, name).toMatchObject({ code: 'TOOL_PENDING_APPROVAL', tool: name });
    }

    await approve(gateway.url, 'add_note');
    expect(await search('adds a note')).toContain('notes__add_note');
    expect(textOf(await viaCallTool('notes__add_note'))).toBe('called add_note');
    expect(await search('sync notes')).not.toContain('notes__sync_notes');
  });
});
