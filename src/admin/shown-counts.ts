/**
 * The admin page's "what a client sees" counts, per caller, without the page itself becoming a
 * load on the upstreams. Counting lists through the caller's view the way a client does
 * (routing/visible-counts.ts) asks every visible server for its lists; a page refreshing every few
 * seconds would then retry a server that is down (and log that it was left out) on every refresh.
 * So a count is kept until something it depends on moves — a server's state, its primary
 * connection or that connection's lists (`list_changed`), the enablement decisions, a reload — or
 * {@link MAX_AGE_MS} passes (a principal's own connection, or a reload that only re-filtered,
 * move nothing visible here), and a count still running is shared, never started twice. A count
 * taking longer than {@link WAIT_MS} (a server still connecting) is answered as not counted yet.
 */
import { LRUCache } from 'lru-cache';
import type { AccessProfile } from '../policy/access-policy.js';
import type { UpstreamLink } from '../upstream/link.js';
import type { UpstreamRegistry } from '../upstream/registry.js';
import { effectiveState } from '../upstream/registry-entry.js';

/** What a caller is shown of one server (routing/visible-counts.ts has the same shape). */
export type ShownCounts =
  | { readonly tools: number; readonly deferredTools: number; readonly prompts: number; readonly resources: number; readonly resourceTemplates: number }
  | { readonly unavailable: true };

export interface AdminCaller {
  /** Who authentication says is asking; undefined without auth. */
  readonly principal: string | undefined;
  /** Its access profile; undefined when nothing is hidden from it. */
  readonly access: AccessProfile | undefined;
}

export type CountShown = (caller: AdminCaller) => Promise<ReadonlyMap<string, ShownCounts>>;

const MAX_AGE_MS = 60_000;
const WAIT_MS = 2_000;

interface Kept {
  readonly fingerprint: string;
  readonly at: number;
  readonly counts: Promise<ReadonlyMap<string, ShownCounts> | undefined>;
}

export class ShownCountsMemo {
  /** One entry per caller view: admins are few (the policy's `admins`, or the one anonymous caller). */
  private readonly kept = new LRUCache<string, Kept>({ max: 32 });
  private readonly linkIds = new WeakMap<UpstreamLink, number>();
  private nextLinkId = 1;

  constructor(
    private readonly registry: UpstreamRegistry,
    private readonly count: CountShown,
    /** Moves with every enablement decision and reload (anything that changes who sees what). */
    private readonly generation: () => string,
  ) {}

  /** The caller's counts, or undefined when they are not known within {@link WAIT_MS}. */
  async countsFor(caller: AdminCaller): Promise<ReadonlyMap<string, ShownCounts> | undefined> {
    const key = JSON.stringify([caller.principal ?? null, caller.access?.key ?? null]);
    const fingerprint = this.fingerprint();
    const now = Date.now();
    let kept = this.kept.get(key);
    if (kept === undefined || kept.fingerprint !== fingerprint || now - kept.at > MAX_AGE_MS) {
      const fresh: Kept = {
        fingerprint,
        at: now,
        counts: Promise.resolve(caller).then(this.count).catch(() => {
          // A failed count is not kept: the next refresh tries again.
          if (this.kept.get(key) === fresh) this.kept.delete(key);
          return undefined;
        }),
      };
      kept = fresh;
      this.kept.set(key, fresh);
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, WAIT_MS, undefined);
    });
    try {
      return await Promise.race([kept.counts, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private fingerprint(): string {
    const parts = [this.generation()];
    for (const entry of this.registry.entries.values()) {
      const link = entry.primary.current;
      parts.push(`${entry.name}:${effectiveState(entry)}:${link === undefined ? '-' : `${this.idOf(link)}.${link.listVersion}`}`);
    }
    return parts.join('|');
  }

  private idOf(link: UpstreamLink): number {
    let id = this.linkIds.get(link);
    if (id === undefined) {
      id = this.nextLinkId++;
      this.linkIds.set(link, id);
    }
    return id;
  }
}
