/**
 * Task objects as a client sees them (pure functions): the upstream's task with the gateway's id
 * and ttl in place of the upstream's, in the shape of the client's revision.
 *
 * 2025-11-25 `Task`: `taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttl, pollInterval?`.
 * 2026-07-28 (tasks extension) `Task`: the same with `ttlMs` and `pollIntervalMs`, and a
 * `tasks/get` answer inlines the final `result` (completed) or JSON-RPC `error` (failed).
 */
import type { TaskRecord } from './task-table.js';

type Json = Record<string, unknown>;

export const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

const STATUSES = new Set(['working', 'input_required', 'completed', 'failed', 'cancelled']);

export interface UpstreamTask {
  taskId: string;
  status: string;
  ttl?: number | null;
  [key: string]: unknown;
}

/** The task an upstream's `CreateTaskResult` (2025) carries, or undefined when it is not one. */
export function createdTaskOf(result: Json): UpstreamTask | undefined {
  return asTask(result.task);
}

/** `value` as a 2025 task object (string id, known status), or undefined. */
export function asTask(value: unknown): UpstreamTask | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const task = value as Json;
  if (typeof task.taskId !== 'string' || typeof task.status !== 'string' || !STATUSES.has(task.status)) return undefined;
  return task as UpstreamTask;
}

/** The 2025 task fields the gateway relays (the upstream's `_meta` and unknown fields stay behind). */
const LEGACY_FIELDS = ['status', 'statusMessage', 'createdAt', 'lastUpdatedAt', 'pollInterval'] as const;

/** A 2025 task for the client: the gateway's id and ttl. */
export function task2025(task: UpstreamTask, record: TaskRecord): Json {
  const shown: Json = { taskId: record.id };
  for (const field of LEGACY_FIELDS) if (task[field] !== undefined) shown[field] = task[field];
  shown.ttl = record.ttlMs;
  return shown;
}

/** A 2026 task (extension shape) for the client: the gateway's id, `ttlMs`, `pollIntervalMs`. */
export function task2026(task: UpstreamTask, record: TaskRecord, status: string = task.status): Json {
  const shown: Json = { taskId: record.id, status };
  if (task.statusMessage !== undefined) shown.statusMessage = task.statusMessage;
  shown.createdAt = task.createdAt ?? new Date(record.createdAt).toISOString();
  shown.lastUpdatedAt = task.lastUpdatedAt ?? shown.createdAt;
  shown.ttlMs = record.ttlMs;
  if (typeof task.pollInterval === 'number') shown.pollIntervalMs = task.pollInterval;
  return shown;
}

/** A `tasks/result` answer with the related-task key naming the gateway's id (2025-11-25 MUST). */
export function withRelatedTask(result: Json, record: TaskRecord): Json {
  const meta = { ...((result._meta as Json | undefined) ?? {}), [RELATED_TASK_KEY]: { taskId: record.id } };
  return { ...result, _meta: meta };
}

/** A final result without the upstream's related-task key (2026: the task object names the task). */
export function withoutRelatedTask(result: Json): Json {
  const meta = result._meta as Json | undefined;
  if (meta === undefined || !(RELATED_TASK_KEY in meta)) return result;
  const { [RELATED_TASK_KEY]: _dropped, ...rest } = meta;
  const { _meta: _meta, ...base } = result;
  return Object.keys(rest).length === 0 ? base : { ...base, _meta: rest };
}

/**
 * `value` with every occurrence of the upstream's id replaced by the gateway's (error messages
 * and data an upstream returns about a task name it by its own id, which the client never saw).
 */
export function renamed<T>(value: T, record: TaskRecord): T {
  if (value === undefined) return value;
  const text = JSON.stringify(value);
  return text.includes(record.upstreamId) ? (JSON.parse(text.split(record.upstreamId).join(record.id)) as T) : value;
}
