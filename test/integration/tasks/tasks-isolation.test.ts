/**
 * Tasks never cross between callers. Two principals (bearer auth) and several sessions front
 * server-everything, with its connection per session and shared by everyone (where every
 * client's tasks live in one upstream process and its own `tasks/list` would show them all):
 * a task id of another session or principal answers exactly like an id never issued, for every
 * `tasks/*` method; `tasks/list` shows the caller's tasks only; status notifications reach the
 * owner's session only; 2026 sessionless tasks are bound to their principal.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { passThroughResult } from '../../../demo/lib/pass-through-result.js';
import { seededRandom } from '../../setup/random.js';
import { bearerPrincipals, Cleanup, collectNotifications, connectClient, errorOf, startGatewayFor } from '../harness.js';
import { everythingServer, request2026, RESEARCH_TOOL, TASKS_EXTENSION, untilTerminal } from './everything.js';

const perTest = new Cleanup();
afterEach(() => perTest.run());

type Json = Record<string, unknown>;
const principals = bearerPrincipals('alice', 'bob');

function rpc(client: Client, method: string, params: Json): Promise<Json> {
  return client.request({ method, params } as never, passThroughResult as never) as Promise<Json>;
}

async function gateway(isolation: 'session' | 'shared'): Promise<string> {
  return (await startGatewayFor(perTest, principals, { everything: everythingServer({ isolation }) })).url;
}

async function session(url: string, principal: string): Promise<Client> {
  return (await connectClient(perTest, url, '2025', { headers: principals.headers(principal) })).client;
}

/** Task ids no one was ever given, drawn from the run's seed. */
const neverIssued = seededRandom('tasks-isolation never-issued ids');

/** What a caller gets for an id no one was ever given: every foreign id must get the same. */
async function unknownAnswer(client: Client, method: string): Promise<{ code?: number; message: string }> {
  const { code, message } = await errorOf(rpc(client, method, { taskId: neverIssued.bytes(18).toString('base64url') }));
  return { code, message };
}

describe.each(['session', 'shared'] as const)('tasks of one caller, unreachable to others (isolation: %s)', (isolation) => {
  it('answers another principal asking about a task exactly as for an id never issued, and leaves the task alone', async () => {
    const url = await gateway(isolation);
    const alice = await session(url, 'alice');
    const bob = await session(url, 'bob');
    const created = (await rpc(alice, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'alice only' }, task: {} })).task as Json;

    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const foreign = await errorOf(rpc(bob, method, { taskId: created.taskId }));
      expect({ code: foreign.code, message: foreign.message }).toEqual(await unknownAnswer(bob, method));
    }
    expect((await rpc(bob, 'tasks/list', {})).tasks).toEqual([]);

    // Bob's cancel reached nothing: Alice's task runs to its end and she gets her report.
    const result = await rpc(alice, 'tasks/result', { taskId: created.taskId });
    expect(JSON.stringify(result)).toContain('# Research Report: alice only');
    expect((await rpc(alice, 'tasks/list', {})).tasks).toEqual([expect.objectContaining({ taskId: created.taskId, status: 'completed' })]);
  });

  it('binds a task to its session: another session of the same principal cannot reach it', async () => {
    const url = await gateway(isolation);
    const first = await session(url, 'alice');
    const second = await session(url, 'alice');
    const created = (await rpc(first, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'first session' }, task: {} })).task as Json;
    const foreign = await errorOf(rpc(second, 'tasks/get', { taskId: created.taskId }));
    expect({ code: foreign.code, message: foreign.message }).toEqual(await unknownAnswer(second, 'tasks/get'));
    expect((await rpc(second, 'tasks/list', {})).tasks).toEqual([]);
    expect(await rpc(first, 'tasks/get', { taskId: created.taskId })).toMatchObject({ taskId: created.taskId });
  });

  it('relays task status notifications to the owning session only', async () => {
    const url = await gateway(isolation);
    const alice = await session(url, 'alice');
    const bob = await session(url, 'bob');
    const aliceHears = collectNotifications(alice, 'notifications/tasks/status');
    const bobHears = collectNotifications(bob, 'notifications/tasks/status');
    // Bob has a task of his own on the same upstream, so he has a reason to hear statuses.
    const bobs = (await rpc(bob, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'bob' }, task: {} })).task as Json;
    const alices = (await rpc(alice, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'alice' }, task: {} })).task as Json;
    await rpc(alice, 'tasks/result', { taskId: alices.taskId });
    await rpc(bob, 'tasks/result', { taskId: bobs.taskId });
    await aliceHears.waitFor(1);
    await bobHears.waitFor(1);
    expect(new Set(aliceHears.items.map((s) => s.taskId))).toEqual(new Set([alices.taskId]));
    expect(new Set(bobHears.items.map((s) => s.taskId))).toEqual(new Set([bobs.taskId]));
  });
});

describe('sessionless (2026-07-28) tasks, bound to their principal', () => {
  it('lets only the principal that created a task poll, update or cancel it', async () => {
    const url = await gateway('session');
    const extensions = { [TASKS_EXTENSION]: {} };
    const as = (name: string) => ({ extensions, headers: principals.headers(name) });
    const created = await request2026(url, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: `t-${randomUUID()}` } }, as('alice'));
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
    const taskId = created.result!.taskId as string;

    const never = neverIssued.bytes(18).toString('base64url');
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const params = method === 'tasks/update' ? { inputResponses: {} } : {};
      const foreign = await request2026(url, method, { taskId, ...params }, as('bob'));
      const unknown = await request2026(url, method, { taskId: never, ...params }, as('bob'));
      expect(foreign.error?.code).toBe(-32602);
      expect({ code: foreign.error?.code, message: foreign.error?.message }).toEqual({ code: unknown.error?.code, message: unknown.error?.message });
    }
    const done = await untilTerminal(async () => (await request2026(url, 'tasks/get', { taskId }, as('alice'))).result as Json);
    expect(done.status).toBe('completed');
  });
});
