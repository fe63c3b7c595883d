/**
 * The tasks extension (`io.modelcontextprotocol/tasks`, 2026-07-28) in front of a 2025-11-25
 * task server: server-everything over stdio. The gateway advertises the extension, shows no
 * per-tool `execution.taskSupport` (not part of that revision), answers a call of a tool that
 * requires a task with `resultType: "task"` to a client that declared the extension and with
 * -32021 to one that did not, and `tasks/get` inlines the report once the task is done.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Cleanup, connectClient, errorOf, MCP_POST_HEADERS, messagesOf, MODERN_VERSION, rawRequest, startTestGateway } from '../harness.js';
import { everythingServer, request2026, RESEARCH_TOOL, TASKS_EXTENSION, untilTerminal } from './everything.js';

const suite = new Cleanup();
const perTest = new Cleanup();
let url: string;

beforeAll(async () => {
  url = (await startTestGateway(suite, { everything: everythingServer() })).url;
});
afterEach(() => perTest.run());
afterAll(() => suite.run());

type Json = Record<string, unknown>;
const withExtension = { extensions: { [TASKS_EXTENSION]: {} } };

/** A raw `subscriptions/listen` naming `taskIds`, with or without the extension declared; every message it got. */
async function listenForTasks(taskIds: string[], declared: boolean) {
  const body = {
    jsonrpc: '2.0',
    id: 'tasks-listen',
    method: 'subscriptions/listen',
    params: {
      notifications: { taskIds },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': declared ? withExtension : {},
      },
    },
  };
  const response = await rawRequest(url, {
    headers: { ...MCP_POST_HEADERS, 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'subscriptions/listen' },
    body: JSON.stringify(body),
  });
  return { status: response.status, messages: messagesOf(response) };
}

describe('the tasks extension for 2026-07-28 clients', () => {
  it('refuses task status notifications on subscriptions/listen to a client without the extension (-32021)', async () => {
    const refused = await listenForTasks(['any'], false);
    expect(refused.status).toBe(400);
    expect(refused.messages[0]).toMatchObject({ id: 'tasks-listen', error: { code: -32021, data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } } });
  });

  it('acknowledges no taskIds to a client with the extension (status is not pushed: the client polls tasks/get)', async () => {
    const created = await request2026(url, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: `listen-${randomUUID()}` } }, withExtension);
    const taskId = created.result!.taskId as string;
    const { messages } = await listenForTasks([taskId], true);
    const ack = messages.find((m) => m.method === 'notifications/subscriptions/acknowledged');
    expect((ack?.params as Json | undefined)?.notifications).toEqual({});
    // Nothing else was honoured, so the stream closed gracefully at once (the spec's empty result).
    expect(messages.find((m) => m.id === 'tasks-listen')).toMatchObject({ result: { resultType: 'complete' } });
  });

  it('advertises the extension, not the 2025 capability, and lists tools without execution.taskSupport', async () => {
    const { client } = await connectClient(perTest, url, '2026');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const capabilities = client.getServerCapabilities() as Json;
    expect(capabilities.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(capabilities.tasks).toBeUndefined();
    const { tools } = await client.listTools();
    const research = tools.find((t) => t.name === RESEARCH_TOOL);
    expect(research).toBeDefined();
    expect(research?.execution).toBeUndefined();
  });

  it('refuses a task-required tool to a client without the extension with -32021 naming it', async () => {
    const { client } = await connectClient(perTest, url, '2026');
    const refused = await errorOf(client.callTool({ name: RESEARCH_TOOL, arguments: { topic: 'x' } }));
    expect(refused.code).toBe(-32021);
    expect(refused.data).toMatchObject({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
  });

  it('answers with a task and inlines the report in tasks/get once it completed', async () => {
    const topic = `topic-${randomUUID()}`;
    const created = await request2026(url, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic } }, withExtension);
    expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: expect.any(Number), createdAt: expect.any(String) });
    const taskId = created.result!.taskId as string;

    const done = await untilTerminal(async () => (await request2026(url, 'tasks/get', { taskId }, withExtension)).result as Json);
    expect(done).toMatchObject({ resultType: 'complete', taskId, status: 'completed' });
    expect(JSON.stringify(done.result)).toContain(`# Research Report: ${topic}`);
    // 2026 tasks name the task in the task object; the 2025 related-task key is not carried over.
    expect(JSON.stringify(done.result)).not.toContain('related-task');
  });

  it('does not leave a task waiting for input the gateway cannot ask a 2026 client for: it goes on to its end', async () => {
    const created = await request2026(url, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'python', ambiguous: true } }, withExtension);
    const taskId = created.result!.taskId as string;
    const done = await untilTerminal(async () => (await request2026(url, 'tasks/get', { taskId }, withExtension)).result as Json);
    expect(done.status).toBe('completed');
    expect(JSON.stringify(done.result)).toContain('# Research Report: python');
  });

  it('acknowledges tasks/cancel and tasks/update, and the cancelled task ends cancelled', async () => {
    const created = await request2026(url, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'cancel me' } }, withExtension);
    const taskId = created.result!.taskId as string;
    expect((await request2026(url, 'tasks/update', { taskId, inputResponses: { unknown: { action: 'accept' } } }, withExtension)).result).toMatchObject({
      resultType: 'complete',
    });
    expect((await request2026(url, 'tasks/cancel', { taskId }, withExtension)).result).toMatchObject({ resultType: 'complete' });
    expect(((await request2026(url, 'tasks/get', { taskId }, withExtension)).result as Json).status).toBe('cancelled');
  });

  it('refuses tasks/get to a client without the extension, and 2025-only task methods', async () => {
    const created = await request2026(url, 'tools/call', { name: RESEARCH_TOOL, arguments: { topic: 'y' } }, withExtension);
    const taskId = created.result!.taskId as string;
    expect((await request2026(url, 'tasks/get', { taskId })).error?.code).toBe(-32021);
    expect((await request2026(url, 'tasks/result', { taskId }, withExtension)).error?.code).toBe(-32601);
    expect((await request2026(url, 'tasks/list', {}, withExtension)).error?.code).toBe(-32601);
  });
});
