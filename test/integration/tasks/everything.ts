/**
 * `@modelcontextprotocol/server-everything` (a devDependency, pinned) over stdio behind the
 * gateway, and what its task tests share: its task-required tool, raw 2026-07-28 requests (the SDK
 * 2.4 client refuses a `resultType: "task"` answer, so the extension's flow is driven by hand),
 * and bounded polls. It is used over stdio only: in HTTP mode it binds every interface.
 */
import { fileURLToPath } from 'node:url';
import { MODERN_VERSION } from '../harness/paths.js';
import { MCP_POST_HEADERS, messagesOf, rawRequest } from '../harness/raw-http.js';
import { waitUntil } from '../harness/wait.js';

export const EVERYTHING_JS = fileURLToPath(
  new URL('../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url),
);

/** The gateway's server entry for server-everything over stdio. */
export function everythingServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { transport: 'stdio', command: process.execPath, args: [EVERYTHING_JS, 'stdio'], ...extra };
}

/** server-everything's tool with `execution.taskSupport: "required"`, as the aggregate endpoint names it. */
export const RESEARCH_TOOL = 'everything__simulate-research-query';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface RpcAnswer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/**
 * One sessionless 2026-07-28 request over raw HTTP: the per-request envelope in `_meta`, the
 * routing headers (`Mcp-Method`, and `Mcp-Name` for the methods that name a tool or a task).
 */
export async function request2026(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { extensions?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<RpcAnswer> {
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': options.extensions === undefined ? {} : { extensions: options.extensions },
      },
    },
  };
  const response = await rawRequest(url, {
    headers: {
      ...MCP_POST_HEADERS,
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
  const answer = messagesOf(response).find((m) => m.id === 1) as RpcAnswer | undefined;
  if (answer === undefined) throw new Error(`no answer to ${method} (HTTP ${response.status}): ${response.body.slice(0, 200)}`);
  return answer;
}

/**
 * Polls `read` (a task state) until its status is terminal; a hang guard, not a speed check.
 * Polling `tasks/get` is how a requestor learns a task's outcome (MCP specification, Tasks: the
 * status notification is optional and requestors must not depend on it).
 */
export async function untilTerminal<T extends { status?: unknown }>(read: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  return waitUntil(
    async () => {
      const task = await read();
      return (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') && task;
    },
    'a terminal task status',
    timeoutMs,
    200,
  );
}
