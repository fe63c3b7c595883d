/**
 * One principal's share of a bounded resource (listens, URI subscriptions, pooled connections):
 * how many places each principal holds, at most `max` each, with a principal that holds none
 * forgotten (so the map is bounded by the principals holding something, not by every principal
 * ever seen). The anonymous caller (no principal) has no share: it is bounded only by the totals
 * of whoever holds the share.
 */
export class PrincipalShare {
  private readonly held = new Map<string, number>();

  constructor(readonly max: number) {}

  /** Places `principal` holds right now. */
  of(principal: string): number {
    return this.held.get(principal) ?? 0;
  }

  /** True when `principal` may take `count` more places (always for the anonymous caller). */
  fits(principal: string | undefined, count = 1): boolean {
    return principal === undefined || this.of(principal) + count <= this.max;
  }

  /** `delta` places taken (positive) or given back (negative) by `principal`; none left: forgotten. */
  add(principal: string | undefined, delta: number): void {
    if (principal === undefined) return;
    const left = this.of(principal) + delta;
    if (left <= 0) this.held.delete(principal);
    else this.held.set(principal, left);
  }

  /** One place for `principal`, or undefined past its share: the returned free gives it back once. */
  take(principal: string | undefined): (() => void) | undefined {
    if (!this.fits(principal)) return undefined;
    this.add(principal, 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.add(principal, -1);
    };
  }
}
