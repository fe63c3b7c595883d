/**
 * The tools one 2025-era session added to its `tools/list` with `search_tools` `load: true`.
 * Bounded: beyond `max` the oldest loaded are dropped first. Holds exposed names only; whether a
 * name is listed is decided against the current catalogue at every `tools/list`, so a tool hidden
 * or removed after it was loaded is never listed.
 */
export class LoadedTools {
  private readonly names = new Set<string>();
  private readonly max: number;
  /** Bumped on every change: part of the session's list fingerprint. */
  version = 0;

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new TypeError('maxLoadedTools must be a positive integer');
    this.max = max;
  }

  get size(): number {
    return this.names.size;
  }

  has(name: string): boolean {
    return this.names.has(name);
  }

  /** Loads `names` in order; returns the names newly loaded and those dropped to make room. */
  load(names: readonly string[]): { loaded: string[]; dropped: string[] } {
    const loaded: string[] = [];
    const dropped: string[] = [];
    for (const name of names) {
      if (this.names.has(name)) continue;
      this.names.add(name);
      loaded.push(name);
      while (this.names.size > this.max) {
        const oldest = this.names.values().next().value as string;
        this.names.delete(oldest);
        dropped.push(oldest);
      }
    }
    if (loaded.length > 0) this.version += 1;
    // A name loaded and dropped again in one call (more names than the bound) is reported as neither.
    return { loaded: loaded.filter((name) => this.names.has(name)), dropped: dropped.filter((name) => !loaded.includes(name)) };
  }
}
