/**
 * A task lives in its upstream connection, so the gateway keeps that connection as long as the
 * task: a session's own stdio child is not closed for idleness under a live task (the task would
 * die with it), and the task is forgotten when the session that owns it ends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { passThroughResult } from '../../../demo/lib/pass-through-result.js';
import { Cleanup, connectClient, startTestGateway } from '../harness.js';
import { everythingServer, RESEARCH_TOOL } from './everything.js';

const perTest = new Cleanup();
afterEach(() => perTest.run());

type Json = Record<string, unknown>;

function rpc(client: Client, method: string, params: Json): Promise<Json> {
  return client.request({ method, params } as never, passThroughResult as never) as Promise<Json>;
}

describe('the connection a task lives on', () => {
  it('is not closed for idleness while the task lives, though it runs far longer than the idle timeout', async () => {
    // The research takes four one-second stages; the session's child would be idle-closed after 150 ms.
    const gateway = await startTestGateway(perTest, { everything: everythingServer({ isolation: 'session' }) }, { sessions: { childIdleTimeoutMs: 150 } });
    const { client } = await connectClient(perTest, gateway.url, '2025');
    const task = (await rpc(client, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'long' }, task: {} })).task as Json;
    const result = await rpc(client, 'tasks/result', { taskId: task.taskId });
    expect(JSON.stringify(result)).toContain('# Research Report: long');
    expect(await rpc(client, 'tasks/get', { taskId: task.taskId })).toMatchObject({ status: 'completed' });
  });
});
