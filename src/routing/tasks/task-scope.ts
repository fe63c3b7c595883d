/**
 * Tasks as one caller sees them: a 2025 session, or the sessionless (2026) requests of one
 * principal. The router hands this scope task-augmented `tools/call`s and every `tasks/*`
 * request; it creates tasks upstream, records them in the endpoint's table under ids of the
 * gateway's own (task-table.ts says why), and answers `tasks/*` from that table — so a request
 * about a task reaches exactly the upstream connection the task lives on, and only its owner's.
 *
 * 2025-11-25 clients: `tools/call` with `task`, `tasks/get`, `tasks/result`, `tasks/list`,
 * `tasks/cancel`; `notifications/tasks/status` relayed to the owning session's stream.
 * 2026-07-28 clients (tasks extension, SEP-2663): a call of a tool whose upstream requires a task
 * is answered with `resultType: "task"` when the client declared the extension (-32021 when it
 * did not); `tasks/get` inlines the result once the task ended; `tasks/cancel` and `tasks/update`
 * acknowledge. The gateway surfaces no mid-task input to 2026 clients: it never lists
 * `inputRequests`, so by the extension's rule every `inputResponses` key is "not outstanding" and
 * is ignored; an upstream waiting for input is unblocked by a refusal (see `drainInput`).
 */
import { GatewayError, toJsonRpcError, UpstreamRpcError } from '../../errors.js';
import type { UpstreamLink } from '../../upstream/link.js';
import { REFUSING_SINK, type DownstreamSink } from '../../rpc/sink.js';
import type { CallContext } from '../router.js';
import { cancelsTasks, declaresTasksExtension, missingTasksExtension, taskSupportOf, type TaskSupport } from './task-capabilities.js';
import { asTask, createdTaskOf, task2025, task2026, renamed, withoutRelatedTask, withRelatedTask, type UpstreamTask } from './task-shapes.js';
import type { TaskRecord, TaskTable } from './task-table.js';
import type { Era } from '../../rpc/era.js';

type Json = Record<string, unknown>;

/** Forwards the call to its upstream; `observe` sees the link and result before they return. */
export type ForwardCall = (params: Json, observe?: (link: UpstreamLink, result: Json) => Json) => Promise<Json>;

export interface TaskScopeOptions {
  table: TaskTable;
  /** Whose tasks these are: an opaque key of the session or principal (never a raw session id). */
  owner: string;
  era: Era;
  /** Where status notifications of this owner's tasks go (a 2025 session's stream). */
  statusSink?: DownstreamSink;
  /** Whether `server` takes task-augmented `tools/call` (its declared capabilities). */
  takesTasks(server: string): boolean;
  /** Keeps `link` open while a task lives on it; returns the release, or undefined when not needed. */
  pin?(server: string, link: UpstreamLink): (() => void) | undefined;
}


const unknownTask = () => new GatewayError('UNKNOWN_TASK', 'Failed to retrieve task: Task not found');

export class TaskScope {
  private readonly options: TaskScopeOptions;

  constructor(options: TaskScopeOptions) {
    this.options = options;
  }

  /** How the tool of `server` is shown: see `presentTaskSupport`. */
  takesTasks(server: string): boolean {
    return this.options.takesTasks(server);
  }

  /** A `tools/call` to `tool` of `server` (params already carry the upstream's tool name). */
  async callTool(server: string, tool: { execution?: unknown } | undefined, params: Json, call: CallContext, forward: ForwardCall): Promise<Json> {
    const takes = this.options.takesTasks(server);
    if (this.options.era === '2025') {
      if (params.task === undefined) return forward(params);
      if (typeof params.task !== 'object' || params.task === null || Array.isArray(params.task)) {
        throw new GatewayError('INVALID_PARAMS', '"task" must be an object');
      }
      // A server that takes no tool tasks processes the call normally (2025-11-25 tasks: MUST
      // ignore the augmentation); so does the gateway, rather than send what it cannot follow.
      if (!takes) return forward(withoutTask(params));
      this.options.table.assertRoom(this.options.owner);
      return forward(params, (link, result) => {
        const created = createdTaskOf(result);
        if (created === undefined) return result;
        const record = this.adopt(server, link, created);
        return { ...result, task: task2025(created, record) };
      });
    }
    const support: TaskSupport = tool === undefined || !takes ? 'forbidden' : taskSupportOf(tool as never);
    // 2026: the server decides per request. Only a tool that cannot run without a task gets one;
    // an optional one runs synchronously, which every client can take.
    if (support !== 'required') return forward(withoutTask(params));
    if (!declaresTasksExtension(call.meta)) throw missingTasksExtension();
    this.options.table.assertRoom(this.options.owner);
    return forward({ ...params, task: {} }, (link, result) => {
      const created = createdTaskOf(result);
      if (created === undefined) return result;
      return { resultType: 'task', ...task2026(created, this.adopt(server, link, created)) };
    });
  }

  /** One `tasks/*` request. */
  async request(method: string, params: Json, call: CallContext): Promise<Json> {
    if (this.options.era === '2026') return this.request2026(method, params, call);
    switch (method) {
      case 'tasks/get': {
        const record = this.find(params);
        return task2025(await this.upstreamTask(record, call), record);
      }
      case 'tasks/result': {
        const record = this.find(params);
        return withRelatedTask(await this.upstream(record, 'tasks/result', call), record);
      }
      case 'tasks/list':
        return { tasks: await this.list(params, call) };
      case 'tasks/cancel': {
        const record = this.find(params);
        this.assertCancellable(record);
        const result = await this.upstream(record, 'tasks/cancel', call);
        const task = asTask(result);
        return task === undefined ? result : task2025(task, record);
      }
      default:
        throw new GatewayError('NOT_SUPPORTED', `Method not found: ${method}`);
    }
  }

  private async request2026(method: string, params: Json, call: CallContext): Promise<Json> {
    if (method !== 'tasks/get' && method !== 'tasks/cancel' && method !== 'tasks/update') {
      throw new GatewayError('NOT_SUPPORTED', `Method not found: ${method}`);
    }
    if (!declaresTasksExtension(call.meta)) throw missingTasksExtension();
    const record = this.find(params);
    switch (method) {
      case 'tasks/get':
        return { resultType: 'complete', ...(await this.detailedTask(record, call)) };
      case 'tasks/cancel':
        this.assertCancellable(record);
        // Cooperative and acknowledged whatever the task's state (SEP-2663: MUST acknowledge).
        await this.upstream(record, 'tasks/cancel', call).catch((error: unknown) => {
          if (!(error instanceof UpstreamRpcError)) throw error;
        });
        return { resultType: 'complete' };
      default:
        // No `inputRequests` are ever surfaced, so no response key is outstanding: each is ignored.
        return { resultType: 'complete' };
    }
  }

  /** A 2026 `tasks/get` answer: the state, and the final result or error once the task ended. */
  private async detailedTask(record: TaskRecord, call: CallContext): Promise<Json> {
    const task = await this.upstreamTask(record, call);
    switch (task.status) {
      case 'completed':
      case 'failed':
        try {
          // 2026 keeps `failed` for JSON-RPC errors; a tool result with isError is `completed`.
          const result = withoutRelatedTask(await this.upstream(record, 'tasks/result', call));
          return { ...task2026(task, record, 'completed'), result };
        } catch (error) {
          if (!(error instanceof UpstreamRpcError)) throw error;
          return { ...task2026(task, record, 'failed'), error: { ...toJsonRpcError(error) } };
        }
      case 'input_required':
        this.drainInput(record);
        return task2026(task, record, 'working');
      default:
        return task2026(task, record);
    }
  }

  /**
   * A 2025 upstream delivers a task's input requests only while `tasks/result` is open. The
   * gateway cannot put them before a 2026 client, so it opens `tasks/result` once: the requests
   * arrive on a connection with no one to answer them and are refused, and the upstream goes on
   * without the input (or fails the task) — it is never left waiting until its ttl.
   */
  private drainInput(record: TaskRecord): void {
    if (drainedTasks.has(record)) return;
    drainedTasks.add(record);
    void record.link.request('tasks/result', { taskId: record.upstreamId }, { sink: REFUSING_SINK }).catch(() => undefined);
  }

  /** The owner's tasks, each as its upstream reports it now; ones the upstream forgot are left out. */
  private async list(params: Json, call: CallContext): Promise<Json[]> {
    // The whole list fits one page (at most maxPerOwner tasks): no cursor is ever issued.
    if (params.cursor !== undefined) throw new GatewayError('INVALID_PARAMS', 'Invalid cursor');
    const records = this.options.table.ownedBy(this.options.owner);
    const tasks = await Promise.all(
      records.map(async (record) => {
        try {
          return task2025(await this.upstreamTask(record, call), record);
        } catch {
          return undefined;
        }
      }),
    );
    return tasks.filter((task): task is Json => task !== undefined);
  }

  /** Records a task the upstream created on `link`; cancels it upstream if the table is full. */
  private adopt(server: string, link: UpstreamLink, created: UpstreamTask): TaskRecord {
    try {
      return this.options.table.add({
        owner: this.options.owner,
        server,
        upstreamId: created.taskId,
        link,
        upstreamTtlMs: typeof created.ttl === 'number' || created.ttl === null ? created.ttl : undefined,
        ...(this.options.statusSink === undefined ? {} : { statusSink: this.options.statusSink }),
        ...(this.options.pin === undefined ? {} : { onForget: this.options.pin(server, link) }),
      });
    } catch (error) {
      // Filled up while the call ran: the task the client will never hear of is not left running.
      if (cancelsTasks(link.capabilities)) {
        void link.request('tasks/cancel', { taskId: created.taskId }, { sink: REFUSING_SINK }).catch(() => undefined);
      }
      throw error;
    }
  }

  private find(params: Json): TaskRecord {
    const record = this.options.table.find(this.options.owner, params.taskId);
    if (record === undefined) throw unknownTask();
    return record;
  }

  private assertCancellable(record: TaskRecord): void {
    if (!cancelsTasks(record.link.capabilities)) {
      throw new GatewayError('NOT_SUPPORTED', `upstream "${record.server}" does not support cancelling tasks`, { server: record.server });
    }
  }

  private async upstreamTask(record: TaskRecord, call: CallContext): Promise<UpstreamTask> {
    const task = asTask(await this.upstream(record, 'tasks/get', call));
    if (task === undefined) throw new GatewayError('UPSTREAM_UNAVAILABLE', `upstream "${record.server}" answered tasks/get with no task`, { server: record.server });
    return task;
  }

  /**
   * One request about `record` to the very connection its task lives on (never another, where
   * the upstream id would mean nothing or someone else's task). Upstream errors come back with
   * the gateway's id in place of the upstream's.
   */
  private async upstream(record: TaskRecord, method: string, call: CallContext): Promise<Json> {
    if (record.link.closed) {
      this.options.table.forget(record.id);
      throw unknownTask();
    }
    try {
      return await record.link.request(method, { taskId: record.upstreamId }, { sink: call.sink, signal: call.signal });
    } catch (error) {
      if (error instanceof UpstreamRpcError) throw new UpstreamRpcError(error.rpcCode, renamed(error.message, record), renamed(error.data, record));
      throw error;
    }
  }
}

/** Tasks whose input `tasks/result` was opened to refuse (weak: a forgotten task leaves it). */
const drainedTasks = new WeakSet<TaskRecord>();

function withoutTask(params: Json): Json {
  if (!('task' in params)) return params;
  const { task: _dropped, ...rest } = params;
  return rest;
}


/** Relays an upstream's `notifications/tasks/status` to the task's owner, under the gateway's id. */
export function relayTaskStatus(record: TaskRecord, params: Json): void {
  const task = asTask(params);
  if (record.statusSink === undefined || task === undefined) return;
  void record.statusSink.notify({ method: 'notifications/tasks/status', params: task2025(task, record) }).catch(() => undefined);
}

