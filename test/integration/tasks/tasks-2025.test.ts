/**
 * Tasks (MCP 2025-11-25) through the gateway, against server-everything over stdio: its
 * `simulate-research-query` requires a task, and a 2025 client gets its report through
 * `tasks/get` / `tasks/result`, sees its task in `tasks/list`, can cancel it, and hears
 * `notifications/tasks/status` — all under ids the gateway minted.
 */
import { randomUUID } from 'node:crypto';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, TaskStatusNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { passThroughResult } from '../../../demo/lib/pass-through-result.js';
import { Cleanup, connectClient, errorOf, startTestGateway, waitUntil, within } from '../harness.js';
import { everythingServer, RESEARCH_TOOL } from './everything.js';

const suite = new Cleanup();
const perTest = new Cleanup();
let url: string;

beforeAll(async () => {
  url = (await startTestGateway(suite, { everything: everythingServer() }, { tasks: { maxPerOwner: 2 } })).url;
});
afterEach(() => perTest.run());
afterAll(() => suite.run());

type Json = Record<string, unknown>;

function rpc(client: Client, method: string, params: Json): Promise<Json> {
  return client.request({ method, params } as never, passThroughResult as never) as Promise<Json>;
}

async function startResearch(client: Client, topic: string): Promise<Json> {
  const created = await rpc(client, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic }, task: { ttl: 60_000 } });
  return created.task as Json;
}

function reportText(result: Json): string {
  return ((result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '') as string;
}

describe('tasks for 2025-11-25 clients', () => {
  it('advertises the tasks capability and lists the task-required tool with its task support', async () => {
    const { client } = await connectClient(perTest, url, '2025');
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === RESEARCH_TOOL)?.execution).toEqual({ taskSupport: 'required' });
  });

  it('runs simulate-research-query as a task for the SDK 1.x task client and relays its status under the gateway id', async () => {
    const topic = `topic-${randomUUID()}`;
    const client = new V1Client({ name: 'v1-tasks', version: '1.0.0' }, { capabilities: {} });
    const statuses: Json[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      statuses.push(notification.params as Json);
    });
    const transport = new V1Transport(new URL(url));
    await within(client.connect(transport), 15_000, 'v1 connect');
    perTest.add(async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    });

    const seen: Array<{ type: string; task?: { taskId: string; status: string }; result?: Json }> = [];
    const stream = client.experimental.tasks.callToolStream({ name: RESEARCH_TOOL, arguments: { topic } }, CallToolResultSchema, {
      task: { ttl: 60_000 },
    });
    for await (const message of stream) seen.push(message as never);

    const created = seen.find((m) => m.type === 'taskCreated')?.task;
    expect(created?.status).toBe('working');
    const final = seen.at(-1);
    expect(final?.type).toBe('result');
    expect(reportText(final!.result!)).toContain(`# Research Report: ${topic}`);
    // The result names the task by the id the client was given.
    expect((final!.result!._meta as Json)['io.modelcontextprotocol/related-task']).toEqual({ taskId: created!.taskId });

    await waitUntil(() => statuses.some((s) => s.status === 'completed'), 'a completed status notification');
    expect(new Set(statuses.map((s) => s.taskId))).toEqual(new Set([created!.taskId]));
  });

  it('answers tasks/get, tasks/result and tasks/list for the task of the session', async () => {
    const topic = `topic-${randomUUID()}`;
    const { client } = await connectClient(perTest, url, '2025');
    const task = await startResearch(client, topic);
    expect(task).toMatchObject({ status: 'working', ttl: expect.any(Number), createdAt: expect.any(String) });
    const id = task.taskId as string;

    const polled = await rpc(client, 'tasks/get', { taskId: id });
    expect(polled.taskId).toBe(id);
    expect(['working', 'completed']).toContain(polled.status);

    const result = await rpc(client, 'tasks/result', { taskId: id });
    expect(reportText(result)).toContain(`# Research Report: ${topic}`);
    expect((result._meta as Json)['io.modelcontextprotocol/related-task']).toEqual({ taskId: id });

    expect(await rpc(client, 'tasks/get', { taskId: id })).toMatchObject({ taskId: id, status: 'completed' });
    const listed = await rpc(client, 'tasks/list', {});
    expect((listed.tasks as Json[]).map((t) => [t.taskId, t.status])).toEqual([[id, 'completed']]);
  });

  it('cancels a running task, and refuses to cancel one that already ended', async () => {
    const { client } = await connectClient(perTest, url, '2025');
    const running = await startResearch(client, 'to cancel');
    const cancelled = await rpc(client, 'tasks/cancel', { taskId: running.taskId });
    expect(cancelled).toMatchObject({ taskId: running.taskId, status: 'cancelled' });
    expect(await rpc(client, 'tasks/get', { taskId: running.taskId })).toMatchObject({ status: 'cancelled' });

    const again = await errorOf(rpc(client, 'tasks/cancel', { taskId: running.taskId }));
    expect(again.code).toBe(-32602);
  });

  it('holds one session to tasks.maxPerOwner live tasks, and another session still gets its own', async () => {
    const { client } = await connectClient(perTest, url, '2025');
    await startResearch(client, 'one');
    await startResearch(client, 'two');
    const refused = await errorOf(startResearch(client, 'three'));
    expect(refused.code).toBe(-32600);
    expect(refused.data).toMatchObject({ code: 'TASK_LIMIT' });

    const { client: other } = await connectClient(perTest, url, '2025');
    expect((await startResearch(other, 'elsewhere')).status).toBe('working');
  });

  it('relays the elicitation a task asks for while the client waits on tasks/result, and the answer shapes the report', async () => {
    const { client } = await connectClient(perTest, url, '2025', {
      capabilities: { elicitation: { form: {} } },
      setup: (c) =>
        c.setRequestHandler('elicitation/create', (request) => {
          const related = (request.params._meta as Json | undefined)?.['io.modelcontextprotocol/related-task'];
          return { action: 'accept', content: { interpretation: related === undefined ? 'unrelated' : 'historical' } };
        }),
    });
    const task = await rpc(client, 'tools/call', {
      name: RESEARCH_TOOL,
      arguments: { topic: 'python', ambiguous: true },
      task: {},
    }).then((r) => r.task as Json);
    const result = await rpc(client, 'tasks/result', { taskId: task.taskId });
    expect(reportText(result)).toContain('# Research Report: python (historical)');
  });

  it('refuses a task-augmented call with a task that is not an object', async () => {
    const { client } = await connectClient(perTest, url, '2025');
    const refused = await errorOf(rpc(client, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'x' }, task: 5 }));
    expect(refused.code).toBe(-32602);
  });
});
