import { describe, expect, it } from 'vitest';
import { asTask, task2025, task2026, renamed, withoutRelatedTask, withRelatedTask } from '../../../src/routing/tasks/task-shapes.js';
import type { TaskRecord } from '../../../src/routing/tasks/task-table.js';

const record = { id: 'GATEWAY-ID', upstreamId: 'abc123', ttlMs: 5_000, createdAt: 0 } as TaskRecord;
const upstream = {
  taskId: 'abc123',
  status: 'working',
  statusMessage: 'Gathering',
  createdAt: '2026-01-01T00:00:00Z',
  lastUpdatedAt: '2026-01-01T00:00:01Z',
  ttl: 300_000,
  pollInterval: 1_000,
  _meta: { private: true },
  extra: 'x',
};

describe('task shapes', () => {
  it('accepts only task objects with a string id and a known status', () => {
    expect(asTask(upstream)).toBe(upstream);
    for (const bad of [null, [], 'x', { taskId: 1, status: 'working' }, { taskId: 'a', status: 'done' }]) expect(asTask(bad)).toBeUndefined();
  });

  it('shows a 2025 task under the gateway id and ttl, without the upstream extras', () => {
    expect(task2025(upstream, record)).toEqual({
      taskId: 'GATEWAY-ID',
      status: 'working',
      statusMessage: 'Gathering',
      createdAt: '2026-01-01T00:00:00Z',
      lastUpdatedAt: '2026-01-01T00:00:01Z',
      pollInterval: 1_000,
      ttl: 5_000,
    });
  });

  it('shows a 2026 task with ttlMs and pollIntervalMs', () => {
    expect(task2026(upstream, record, 'completed')).toEqual({
      taskId: 'GATEWAY-ID',
      status: 'completed',
      statusMessage: 'Gathering',
      createdAt: '2026-01-01T00:00:00Z',
      lastUpdatedAt: '2026-01-01T00:00:01Z',
      ttlMs: 5_000,
      pollIntervalMs: 1_000,
    });
  });

  it('names the gateway id in a result related-task key, and drops that key for 2026', () => {
    const result = { content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 'abc123' }, other: 1 } };
    expect(withRelatedTask(result, record)._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId: 'GATEWAY-ID' }, other: 1 });
    expect(withoutRelatedTask(result)).toEqual({ content: [], _meta: { other: 1 } });
    expect(withoutRelatedTask({ content: [], _meta: { 'io.modelcontextprotocol/related-task': {} } })).toEqual({ content: [] });
  });

  it('replaces the upstream id in what an upstream said about the task', () => {
    expect(renamed('Task abc123 not found', record)).toBe('Task GATEWAY-ID not found');
    expect(renamed({ ids: ['abc123'] }, record)).toEqual({ ids: ['GATEWAY-ID'] });
    expect(renamed(undefined, record)).toBeUndefined();
  });
});
