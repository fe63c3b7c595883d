/**
 * When to tell 2026 clients (`subscriptions/listen`) that a list changed, for a change heard on a
 * connection other than the one their lists come from (a pooled or a session's own connection:
 * server-changes.ts). Whether it concerns them depends on the upstream — state shared by every
 * connection (a file, a database) or kept per connection — so the view they see is rebuilt and
 * compared: they are told only when it differs. That keeps one session's private activity on a
 * per-connection server from reaching everybody as a signal, and costs one re-fetch of one list
 * per change (re-checks of one list never overlap; changes during one are folded into one more).
 */
import { createHash } from 'node:crypto';
import type { Catalogue } from '../../catalogue/catalogue.js';
import type { ListKind } from '../../upstream/list-cache.js';
import type { ChangedList } from '../../upstream/server-changes.js';

const VIEWS: Readonly<Record<ChangedList, readonly ListKind[]>> = {
  tools: ['tools'],
  prompts: ['prompts'],
  resources: ['resources', 'resourceTemplates'],
};

export class ListWatch {
  private readonly catalogue: Catalogue;
  private readonly publish: (list: ChangedList) => void;
  private readonly seen = new Map<ChangedList, string>();
  private readonly running = new Set<ChangedList>();
  private readonly again = new Set<ChangedList>();

  constructor(catalogue: Catalogue, publish: (list: ChangedList) => void) {
    this.catalogue = catalogue;
    this.publish = publish;
  }

  /** Records what the views look like now, so the first change heard elsewhere can be judged. */
  prime(): void {
    for (const list of Object.keys(VIEWS) as ChangedList[]) this.schedule(list, false);
  }

  /** The connection the view reads from announced the change itself: it is the view's. */
  announced(list: ChangedList): void {
    this.publish(list);
    this.schedule(list, false);
  }

  /** A change heard elsewhere: re-check the view, tell listeners only if it moved. */
  heard(list: ChangedList): void {
    this.schedule(list, true);
  }

  private schedule(list: ChangedList, tell: boolean): void {
    if (this.running.has(list)) {
      if (tell) this.again.add(list);
      return;
    }
    this.running.add(list);
    void this.recheck(list, tell).finally(() => {
      this.running.delete(list);
      if (this.again.delete(list)) this.schedule(list, true);
    });
  }

  private async recheck(list: ChangedList, tell: boolean): Promise<void> {
    let print: string;
    try {
      const hash = createHash('sha256');
      for (const kind of VIEWS[list]) hash.update(JSON.stringify((await this.catalogue.listing(kind)).value));
      print = hash.digest('base64');
    } catch {
      return; // the catalogue logs what failed; nothing to compare
    }
    const before = this.seen.get(list);
    this.seen.set(list, print);
    // Never seen (the view could not be read before): it may have moved, so say so once.
    if (tell && before !== print) this.publish(list);
  }
}
