/**
 * The tasks one endpoint has handed out, each under an id of the gateway's own and bound to its
 * owner: a 2025 session, or (sessionless 2026 calls) the authenticated principal.
 *
 * Why the gateway mints ids instead of relaying the upstream's: an upstream's ids are unique only
 * on its own connection, and a shared or pooled connection carries many clients' tasks, so an
 * upstream id neither names the server nor says whose the task is. A gateway id is 144 random
 * bits (MCP 2025-11-25, tasks, Security: "cryptographically secure task IDs"), and a lookup by a
 * caller that does not own it finds nothing — exactly like an id never issued — so a task id
 * seen in a log, guessed or replayed by another session or principal reaches nothing.
 *
 * Bounded: at most `maxPerOwner` live tasks per owner and `maxTotal` in all; every task is
 * forgotten at its expiry (its ttl, lowered to `maxTtlMs`), when its upstream connection closes,
 * or when its owner goes (a session closing). What the gateway forgets, it answers as unknown.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { UpstreamLink } from '../../upstream/link.js';
import type { DownstreamSink } from '../../rpc/sink.js';
import type { LinkEvent } from '../../upstream/link.js';

export interface TaskTableOptions {
  maxPerOwner: number;
  maxTotal: number;
  maxTtlMs: number;
  /** Clock in ms (tests of expiry pass their own); default `Date.now`. */
  now?: () => number;
}

export interface NewTask {
  owner: string;
  server: string;
  /** The upstream's id of the task, on `link`. */
  upstreamId: string;
  /** The connection the task lives on: every later request about it goes there, and only there. */
  link: UpstreamLink;
  /** The upstream's ttl (ms; null: unlimited, absent: not said). */
  upstreamTtlMs: number | null | undefined;
  /** Where the task's status notifications go (a 2025 session); absent: nowhere (clients poll). */
  statusSink?: DownstreamSink;
  /** Called once when the task is forgotten (gives back a hold on the connection). */
  onForget?: () => void;
}

export interface TaskRecord {
  readonly id: string;
  readonly owner: string;
  readonly server: string;
  readonly upstreamId: string;
  readonly link: UpstreamLink;
  readonly createdAt: number;
  /** The ttl the gateway keeps the task for, and shows: the upstream's, at most `maxTtlMs`. */
  readonly ttlMs: number;
  readonly statusSink: DownstreamSink | undefined;
}

interface Entry extends TaskRecord {
  timer: NodeJS.Timeout;
  onForget: (() => void) | undefined;
}

interface LinkWatch {
  byUpstreamId: Map<string, Entry>;
  unsubscribe: () => void;
}

/** A task status notification as the upstream sent it: its params name the upstream's id. */
export type StatusRelay = (record: TaskRecord, params: Record<string, unknown>) => void;

export class TaskTable {
  private readonly options: TaskTableOptions;
  private readonly now: () => number;
  private readonly byId = new Map<string, Entry>();
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly byLink = new Map<UpstreamLink, LinkWatch>();
  private relay: StatusRelay | undefined;

  constructor(options: TaskTableOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.byId.size;
  }

  /** Where upstream status notifications go once matched to a task (set by the endpoint). */
  onStatus(relay: StatusRelay): void {
    this.relay = relay;
  }

  /** Live tasks of `owner`. */
  countOf(owner: string): number {
    return this.byOwner.get(owner)?.size ?? 0;
  }

  /** Refuses with `TASK_LIMIT` when `owner` may not create another task now. */
  assertRoom(owner: string): void {
    if (this.countOf(owner) >= this.options.maxPerOwner) {
      throw new GatewayError('TASK_LIMIT', `too many live tasks (at most ${this.options.maxPerOwner}); let some finish or expire`);
    }
    if (this.byId.size >= this.options.maxTotal) {
      throw new GatewayError('TASK_LIMIT', 'the gateway tracks too many tasks right now; retry later');
    }
  }

  /** Records a task the upstream created; refuses with `TASK_LIMIT` past either cap. */
  add(task: NewTask): TaskRecord {
    try {
      this.assertRoom(task.owner);
    } catch (error) {
      task.onForget?.();
      throw error;
    }
    const id = randomBytes(18).toString('base64url');
    const ttlMs = Math.min(task.upstreamTtlMs ?? this.options.maxTtlMs, this.options.maxTtlMs);
    const timer = setTimeout(() => this.forget(id), ttlMs);
    timer.unref();
    const entry: Entry = {
      id,
      owner: task.owner,
      server: task.server,
      upstreamId: task.upstreamId,
      link: task.link,
      createdAt: this.now(),
      ttlMs,
      statusSink: task.statusSink,
      timer,
      onForget: task.onForget,
    };
    this.byId.set(id, entry);
    let owned = this.byOwner.get(task.owner);
    if (owned === undefined) this.byOwner.set(task.owner, (owned = new Set()));
    owned.add(id);
    this.watch(task.link).byUpstreamId.set(task.upstreamId, entry);
    return entry;
  }

  /**
   * The task `id` if `owner` owns it and it is live; undefined otherwise — the same answer for
   * an id never issued, expired, or another owner's.
   */
  find(owner: string, id: unknown): TaskRecord | undefined {
    if (typeof id !== 'string') return undefined;
    const entry = this.byId.get(id);
    if (entry === undefined || entry.owner !== owner) return undefined;
    if (entry.link.closed) {
      this.forget(id);
      return undefined;
    }
    return entry;
  }

  /** The live tasks of `owner`, oldest first. */
  ownedBy(owner: string): TaskRecord[] {
    const ids = [...(this.byOwner.get(owner) ?? [])];
    return ids.map((id) => this.find(owner, id)).filter((r): r is TaskRecord => r !== undefined);
  }

  forget(id: string): void {
    const entry = this.byId.get(id);
    if (entry === undefined) return;
    this.byId.delete(id);
    clearTimeout(entry.timer);
    const owned = this.byOwner.get(entry.owner);
    owned?.delete(id);
    if (owned?.size === 0) this.byOwner.delete(entry.owner);
    const watch = this.byLink.get(entry.link);
    if (watch !== undefined && watch.byUpstreamId.get(entry.upstreamId) === entry) {
      watch.byUpstreamId.delete(entry.upstreamId);
      if (watch.byUpstreamId.size === 0) {
        watch.unsubscribe();
        this.byLink.delete(entry.link);
      }
    }
    entry.onForget?.();
  }

  /** Forgets every task of `owner` (its session closed). */
  forgetOwner(owner: string): void {
    for (const id of [...(this.byOwner.get(owner) ?? [])]) this.forget(id);
  }

  close(): void {
    for (const id of [...this.byId.keys()]) this.forget(id);
  }

  /** Matches the upstream's status notifications on `link` to tasks, and forgets them when it closes. */
  private watch(link: UpstreamLink): LinkWatch {
    const existing = this.byLink.get(link);
    if (existing !== undefined) return existing;
    const byUpstreamId = new Map<string, Entry>();
    const unsubscribe = link.on((event: LinkEvent) => {
      if (event.kind === 'closed') {
        for (const entry of [...byUpstreamId.values()]) this.forget(entry.id);
        return;
      }
      if (event.kind !== 'taskStatus') return;
      // Only a task recorded on this very connection: another connection's ids mean nothing here.
      const entry = byUpstreamId.get(String(event.params.taskId));
      if (entry !== undefined) this.relay?.(entry, event.params);
    });
    const watch = { byUpstreamId, unsubscribe };
    this.byLink.set(link, watch);
    return watch;
  }
}
