/**
 * What the gateway may promise about tasks, from what its upstreams declared (pure functions).
 *
 * MCP 2025-11-25 (basic/utilities/tasks): a server declares `tasks.requests.tools.call` when its
 * `tools/call` may be task-augmented, `tasks.list` and `tasks.cancel` for those operations; a
 * tool then says per tool, in `execution.taskSupport`, whether it forbids, allows or requires a
 * task. MCP 2026-07-28 moves tasks to the `io.modelcontextprotocol/tasks` extension: the server
 * decides per request whether to answer with a task, and a tool carries no `execution` field.
 *
 * The gateway answers `tasks/*` itself, from the tasks it handed out (task-table.ts), so:
 * - `tasks.requests.tools.call` is the union over upstreams (a tool of a server without it is
 *   shown without task support, see {@link presentTaskSupport});
 * - `tasks.list` is offered whenever tasks are: the list is the gateway's own, of the caller's
 *   tasks only, never an upstream's (which would show every client's tasks on a shared connection);
 * - `tasks.cancel` when any upstream can cancel (others answer a clear error).
 */
import type { ServerCapabilities, Tool } from '@modelcontextprotocol/server';
import { GatewayError } from '../../errors.js';
import type { Era } from '../../rpc/era.js';

/** The 2026-07-28 extension identifier (SEP-2663). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export type TaskCapability = NonNullable<ServerCapabilities['tasks']>;

/** True when `capabilities` let `tools/call` be task-augmented (2025-11-25). */
export function acceptsToolTasks(capabilities: ServerCapabilities | undefined): boolean {
  const requests = capabilities?.tasks?.requests as { tools?: { call?: unknown } } | undefined;
  return requests?.tools?.call !== undefined;
}

/** True when `capabilities` offer `tasks/cancel`. */
export function cancelsTasks(capabilities: ServerCapabilities | undefined): boolean {
  return capabilities?.tasks?.cancel !== undefined;
}

/** The gateway's `tasks` capability for 2025 clients, or undefined when no upstream takes tool tasks. */
export function mergeTaskCapability(parts: ReadonlyArray<{ capabilities: ServerCapabilities | undefined }>): TaskCapability | undefined {
  const taking = parts.filter((p) => acceptsToolTasks(p.capabilities));
  if (taking.length === 0) return undefined;
  const merged: TaskCapability = { list: {}, requests: { tools: { call: {} } } };
  if (taking.some((p) => cancelsTasks(p.capabilities))) merged.cancel = {};
  return merged;
}

const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** True when a 2026 request's `_meta` declares the tasks extension in its client capabilities. */
export function declaresTasksExtension(meta: Record<string, unknown> | undefined): boolean {
  const extensions = (meta?.[CLIENT_CAPABILITIES_KEY] as { extensions?: unknown } | undefined)?.extensions;
  return typeof extensions === 'object' && extensions !== null && (extensions as Record<string, unknown>)[TASKS_EXTENSION] !== undefined;
}

/** The -32021 refusal of a tasks request (or task listen) from a client that did not declare the extension. */
export function missingTasksExtension(): GatewayError {
  return new GatewayError('MISSING_CLIENT_CAPABILITY', `Missing required client capability: the ${TASKS_EXTENSION} extension`, {
    data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  });
}

/** How the gateway shows a tool's task support to a client of one era. */
export type TaskSupport = 'forbidden' | 'optional' | 'required';

/** The upstream tool's declared task support, `forbidden` when absent (the spec's default). */
export function taskSupportOf(tool: Pick<Tool, 'execution'>): TaskSupport {
  const declared = (tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport;
  return declared === 'optional' || declared === 'required' ? declared : 'forbidden';
}

/**
 * A tool as a client of `era` is shown it. 2025 clients: a tool whose server does not take tool
 * tasks (`serverTakesTasks` false) is not shown with task support, since the gateway could not
 * honour it; otherwise the upstream's value stands. 2026 clients: `execution.taskSupport` is not
 * part of that revision (the server decides per request), so it is removed. Returns `tool`
 * itself when nothing changes.
 */
export function presentTaskSupport(tool: Tool, serverTakesTasks: boolean, era: Era): Tool {
  const execution = tool.execution as Record<string, unknown> | undefined;
  if (execution === undefined || !('taskSupport' in execution)) return tool;
  if (era === '2025' && serverTakesTasks) return tool;
  const { taskSupport: _dropped, ...rest } = execution;
  const { execution: _execution, ...base } = tool;
  return Object.keys(rest).length === 0 ? (base as Tool) : ({ ...base, execution: rest } as Tool);
}
