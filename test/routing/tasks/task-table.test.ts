import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { TaskTable, type NewTask } from '../../../src/routing/tasks/task-table.js';
import type { UpstreamLink } from '../../../src/upstream/link.js';
import type { LinkEvent } from '../../../src/upstream/link.js';

/** The part of a link the table uses: its closed state and its events (a real link needs a process). */
function fakeLink() {
  const listeners = new Set<(event: LinkEvent) => void>();
  const link = {
    closed: false,
    on(listener: (event: LinkEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(event: LinkEvent) {
      for (const listener of [...listeners]) listener(event);
    },
    get listeners() {
      return listeners.size;
    },
  };
  return link as typeof link & UpstreamLink;
}

const table = (overrides: Partial<ConstructorParameters<typeof TaskTable>[0]> = {}) =>
  new TaskTable({ maxPerOwner: 3, maxTotal: 10, maxTtlMs: 60_000, ...overrides });

function task(owner: string, link: UpstreamLink, upstreamId = 'up-1', extra: Partial<NewTask> = {}): NewTask {
  return { owner, server: 's', upstreamId, link, upstreamTtlMs: 30_000, ...extra };
}

afterEach(() => vi.useRealTimers());

describe('TaskTable', () => {
  it('mints opaque random ids, unrelated to the upstream id', () => {
    const t = table({ maxPerOwner: 100, maxTotal: 100 });
    const link = fakeLink();
    const ids = Array.from({ length: 50 }, (_, i) => t.add(task('a', link, `same-${i % 2}`)).id);
    expect(new Set(ids).size).toBe(50);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(ids.some((id) => id.includes('same'))).toBe(false);
  });

  it('finds a task for its owner only; any other owner, a made-up id or a non-string gets nothing', () => {
    const t = table();
    const record = t.add(task('session:a', fakeLink()));
    expect(t.find('session:a', record.id)).toBe(record);
    expect(t.find('session:b', record.id)).toBeUndefined();
    expect(t.find('session:a', 'x'.repeat(24))).toBeUndefined();
    expect(t.find('session:a', 42)).toBeUndefined();
    expect(t.ownedBy('session:b')).toEqual([]);
  });

  it('caps live tasks per owner and in all, with TASK_LIMIT', () => {
    const t = table({ maxPerOwner: 2, maxTotal: 3 });
    const link = fakeLink();
    t.add(task('a', link, '1'));
    t.add(task('a', link, '2'));
    expect(() => t.add(task('a', link, '3'))).toThrow(GatewayError);
    t.add(task('b', link, '4'));
    try {
      t.add(task('c', link, '5'));
      expect.unreachable();
    } catch (error) {
      expect((error as GatewayError).code).toBe('TASK_LIMIT');
    }
  });

  it('gives back the hold of a refused task at once', () => {
    const t = table({ maxPerOwner: 1 });
    const link = fakeLink();
    t.add(task('a', link, '1'));
    const onForget = vi.fn();
    expect(() => t.add(task('a', link, '2', { onForget }))).toThrow();
    expect(onForget).toHaveBeenCalledTimes(1);
  });

  it('forgets a task at its ttl, lowered to maxTtlMs, and gives back its hold once', () => {
    vi.useFakeTimers();
    const t = table({ maxTtlMs: 10_000 });
    const link = fakeLink();
    const onForget = vi.fn();
    const unlimited = t.add(task('a', link, 'u', { upstreamTtlMs: null, onForget }));
    const short = t.add(task('a', link, 's', { upstreamTtlMs: 2_000 }));
    expect([unlimited.ttlMs, short.ttlMs]).toEqual([10_000, 2_000]);
    vi.advanceTimersByTime(2_000);
    expect(t.find('a', short.id)).toBeUndefined();
    expect(t.find('a', unlimited.id)).toBe(unlimited);
    vi.advanceTimersByTime(8_000);
    expect(t.find('a', unlimited.id)).toBeUndefined();
    expect(t.size).toBe(0);
    expect(onForget).toHaveBeenCalledTimes(1);
    expect(link.listeners).toBe(0);
  });

  it('forgets the tasks of a connection that closed', () => {
    const t = table();
    const link = fakeLink();
    const other = fakeLink();
    const gone = t.add(task('a', link, '1'));
    const kept = t.add(task('a', other, '1'));
    link.emit({ kind: 'closed', reason: 'x' });
    expect(t.find('a', gone.id)).toBeUndefined();
    expect(t.find('a', kept.id)).toBe(kept);
    other.closed = true;
    expect(t.find('a', kept.id)).toBeUndefined();
    expect(t.size).toBe(0);
  });

  it('relays a status notification to the task of that upstream id on that very connection', () => {
    const t = table();
    const relayed: Array<[string, unknown]> = [];
    t.onStatus((record, params) => relayed.push([record.id, params.status]));
    const link = fakeLink();
    const other = fakeLink();
    const mine = t.add(task('a', link, 'shared-id'));
    const theirs = t.add(task('b', other, 'shared-id'));
    link.emit({ kind: 'taskStatus', params: { taskId: 'shared-id', status: 'completed' } });
    link.emit({ kind: 'taskStatus', params: { taskId: 'unknown', status: 'working' } });
    other.emit({ kind: 'taskStatus', params: { taskId: 'shared-id', status: 'failed' } });
    expect(relayed).toEqual([
      [mine.id, 'completed'],
      [theirs.id, 'failed'],
    ]);
  });

  it('forgets every task of an owner that went, and only those', () => {
    const t = table();
    const link = fakeLink();
    t.add(task('a', link, '1'));
    t.add(task('a', link, '2'));
    const kept = t.add(task('b', link, '3'));
    t.forgetOwner('a');
    expect(t.countOf('a')).toBe(0);
    expect(t.ownedBy('b')).toEqual([kept]);
  });
});
