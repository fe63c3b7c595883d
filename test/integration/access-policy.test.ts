/**
 * The policy's `access` rules through a real gateway, for callers whose JWTs carry different
 * `groups`: each one's lists are its own (tools, prompts, resources), a hidden tool or resource
 * answers exactly like an unknown one on call and read, in both eras, and a list built for one
 * caller is never served to another (the lists of a narrowed view are `private` to 2026 caches).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/gateway.js';
import { assertBuilt, Cleanup, connectClient, ERAS, startTestGateway, startUpstreams, textOf } from './harness.js';
import { collectNotifications } from './harness/clients.js';
import { localJwtIssuer, type LocalJwtIssuer } from './harness/local-jwt.js';
import { find, listOf, toggleOk } from '../customizations/enablement-helpers.js';

const perFile = new Cleanup();
const perTest = new Cleanup();
const ISSUER = 'https://idp.test';
const AUDIENCE = 'portcullis-access-test';
let dir: string;
let issuer: LocalJwtIssuer;
let gateway: RunningGateway;

const POLICY = {
  access: {
    default: 'deny',
    rules: [
      { name: 'ops-never-crash', claims: { groups: ['ops'] }, effect: 'deny', tools: ['*crash*'] },
      { name: 'eng-and-ops-everything', claims: { groups: ['eng', 'ops'] }, effect: 'allow' },
      { name: 'sales-echo', claims: { groups: ['sales'] }, effect: 'allow', tools: ['stdio__echo'] },
    ],
  },
};

async function tokenFor(sub: string, groups: string[]): Promise<Record<string, string>> {
  const jwt = await issuer.token(sub, groups);
  return { Authorization: `Bearer ${jwt}` };
}

beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'portcullis-access-'));
  perFile.add(() => rmSync(dir, { recursive: true, force: true }));
  issuer = await localJwtIssuer(dir, ISSUER, AUDIENCE);
  writeFileSync(join(dir, 'policy.json'), JSON.stringify(POLICY));
  const upstreams = await startUpstreams(perFile);
  gateway = await startTestGateway(perFile, upstreams.servers(), {
    policy: join(dir, 'policy.json'),
    auth: issuer.auth,
    audit: { sink: join(dir, 'audit.jsonl') },
  });
});
afterEach(() => perTest.run());
afterAll(() => perFile.run());

const names = (items: Array<{ name?: string; uri?: string }>) => items.map((item) => item.name ?? item.uri).sort();

describe.each(ERAS)('per-principal lists and calls, %s era', (era) => {
  it('shows each caller what its groups allow, and nothing of another caller', async () => {
    const eng = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`eng-${era}`, ['eng']) });
    const sales = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`sales-${era}`, ['sales']) });
    const nobody = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`nobody-${era}`, ['visitors']) });
    // eng lists first: whatever it built must not be what sales reads.
    const engTools = names((await eng.client.listTools()).tools);
    expect(engTools).toEqual(expect.arrayContaining(['stdio__echo', 'stdio__slow', 'stdio__crash', 'http__echo']));
    expect(names((await sales.client.listTools()).tools)).toEqual(['stdio__echo']);
    expect((await nobody.client.listTools()).tools).toEqual([]);
    // A server's other parts follow its server decision: sales sees no resource or prompt of it.
    expect((await eng.client.listResources()).resources.length).toBeGreaterThan(0);
    expect((await sales.client.listResources()).resources).toEqual([]);
    expect((await sales.client.listPrompts()).prompts).toEqual([]);
    // The eng view is still whole after sales listed.
    expect(names((await eng.client.listTools()).tools)).toEqual(engTools);
  });

  it('answers a hidden tool or resource exactly like an unknown one', async () => {
    const sales = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`sales2-${era}`, ['sales']) });
    expect(textOf(await sales.client.callTool({ name: 'stdio__echo', arguments: { text: 'ok' } }))).toContain('ok');
    const hidden = await sales.client.callTool({ name: 'stdio__slow', arguments: { ms: 0 } }).catch((e: unknown) => e as { code: number; message: string });
    const unknown = await sales.client.callTool({ name: 'stdio__no_such_tool', arguments: {} }).catch((e: unknown) => e as { code: number; message: string });
    expect(hidden).toMatchObject({ code: -32602 });
    expect((hidden as { message: string }).message.replace('stdio__slow', 'X')).toBe((unknown as { message: string }).message.replace('stdio__no_such_tool', 'X'));
    await expect(sales.client.readResource({ uri: 'test://static-text' })).rejects.toMatchObject({ message: expect.stringMatching(/not found/i) });
  });

  it('lets a deny rule listed first win over a later allow for the same caller', async () => {
    const ops = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`ops-${era}`, ['ops']) });
    const tools = names((await ops.client.listTools()).tools);
    expect(tools).toContain('stdio__echo');
    expect(tools).toContain('stdio__slow');
    // eng sees stdio__crash (first test); ops, matched by the deny rule first, does not.
    expect(tools).not.toContain('stdio__crash');
    await expect(ops.client.callTool({ name: 'stdio__crash', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });
});

/** The audit lines written so far (the sink writes one tick's lines on the next tick). */
async function auditLines(): Promise<Array<Record<string, unknown>>> {
  await new Promise((resolve) => setImmediate(resolve));
  return readFileSync(join(dir, 'audit.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe.each(ERAS)('audit lines of hidden calls, %s era', (era) => {
  it('name the access rule that hid the tool from each caller, and no rule for a merely unknown one', async () => {
    const ops = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`ops-audit-${era}`, ['ops']) });
    const sales = await connectClient(perTest, gateway.url, era, { headers: await tokenFor(`sales-audit-${era}`, ['sales']) });
    await expect(ops.client.callTool({ name: 'stdio__crash', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await expect(sales.client.callTool({ name: 'stdio__crash', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await expect(ops.client.callTool({ name: 'stdio__no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    const lines = (await auditLines()).filter((line) => typeof line.principal === 'string' && line.principal.endsWith(`-audit-${era}`));
    const of = (principal: string, tool: string) => lines.find((line) => line.principal === principal && line.tool === tool);
    expect(of(`ops-audit-${era}`, 'stdio__crash')).toMatchObject({ decision: 'denied', rule: 'ops-never-crash', server: 'stdio', reason: 'UNKNOWN_TOOL' });
    expect(of(`sales-audit-${era}`, 'stdio__crash')).toMatchObject({ decision: 'denied', rule: 'default', server: 'stdio' });
    expect(of(`ops-audit-${era}`, 'stdio__no_such_tool')).toMatchObject({ decision: 'allowed', rule: null, reason: 'UNKNOWN_TOOL' });
  });
});

describe('2026 caching hints of a narrowed view', () => {
  it('marks every list built for a restricted caller private', async () => {
    const sales = await connectClient(perTest, gateway.url, '2026', { headers: await tokenFor('sales-cache', ['sales']) });
    const result = (await sales.client.listTools()) as unknown as { cacheScope?: string };
    expect(result.cacheScope).toBe('private');
  });
});

describe('access profiles with enablement decisions', () => {
  it('keeps a session decision to its session within one access profile, and offers the customisation list to no caller the access rules apply to', async () => {
    const engA = await connectClient(perTest, gateway.url, '2025', { headers: await tokenFor('eng-enable-a', ['eng']) });
    const engB = await connectClient(perTest, gateway.url, '2025', { headers: await tokenFor('eng-enable-b', ['eng']) });
    const sales = await connectClient(perTest, gateway.url, '2025', { headers: await tokenFor('sales-enable', ['sales']) });
    const aHeaders = { ...(await tokenFor('eng-enable-a', ['eng'])), 'mcp-session-id': engA.transport.sessionId! };
    const before = names((await engA.client.listTools()).tools);
    expect(before).toEqual(expect.arrayContaining(['stdio__echo', 'http__echo']));
    const items = await listOf(gateway.url, aHeaders);
    const httpId = find(items, 'http').id;
    const changed = collectNotifications(engA.client, 'notifications/tools/list_changed');
    await toggleOk(gateway.url, { id: httpId, enabled: false, scope: 'session' }, aHeaders);
    await changed.waitFor(1);
    // A's decision narrows A's view alone; B, with the same access profile, still sees the server.
    const aTools = names((await engA.client.listTools()).tools);
    expect(aTools.some((name) => name.startsWith('http__'))).toBe(false);
    expect(aTools).toContain('stdio__echo');
    expect(names((await engB.client.listTools()).tools)).toEqual(before);
    // The access profile still narrows on top: sales sees only its tool, and no list naming hidden servers.
    expect(names((await sales.client.listTools()).tools)).toEqual(['stdio__echo']);
    expect((await sales.client.listResources()).resources.map((r) => r.uri)).not.toContain('portcullis://customizations');
    // Any rule matching a caller narrows it (even an allow-all): the list is offered to neither.
    expect((await engB.client.listResources()).resources.map((r) => r.uri)).not.toContain('portcullis://customizations');
  });
});
