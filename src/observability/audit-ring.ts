/**
 * The most recent audit lines, in memory, for the admin page (docs/operations.md, "Admin page"):
 * fed by `AuditLog.record` with the very line written to the sink, so the page shows exactly
 * what the audit log holds (no arguments, results or secrets: a line has none). Bounded in count
 * and in bytes (the UTF-8 size of the lines): past either bound the oldest lines go first; a line
 * larger than the byte bound on its own is not kept. Lines are numbered as they come (1, 2, …), so
 * a live page asks only for the lines after the last one it has.
 */

/** One audit line as parsed back (its fields: docs/operations.md, "Fields (the contract)"). */
export type AuditEntry = Readonly<Record<string, unknown>>;

export interface AuditRingLimits {
  readonly maxEntries: number;
  readonly maxBytes: number;
}

export const DEFAULT_AUDIT_RING: AuditRingLimits = { maxEntries: 100, maxBytes: 256 * 1024 };

export class AuditRing {
  private lines: Array<{ line: string; bytes: number; seq: number }> = [];
  private head = 0;
  private totalBytes = 0;
  private pushed = 0;

  constructor(private readonly limits: AuditRingLimits = DEFAULT_AUDIT_RING) {}

  push(line: string): void {
    const bytes = Buffer.byteLength(line);
    this.pushed += 1;
    if (bytes > this.limits.maxBytes || this.limits.maxEntries < 1) return;
    this.lines.push({ line, bytes, seq: this.pushed });
    this.totalBytes += bytes;
    while (this.lines.length - this.head > this.limits.maxEntries || this.totalBytes > this.limits.maxBytes) {
      this.totalBytes -= this.lines[this.head]!.bytes;
      this.head += 1;
    }
    // Drop the consumed prefix now and then, so the array stays near the bound.
    if (this.head > this.limits.maxEntries) {
      this.lines = this.lines.slice(this.head);
      this.head = 0;
    }
  }

  get size(): number {
    return this.lines.length - this.head;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** The number of the latest line recorded (0 before the first), kept or not. */
  get latest(): number {
    return this.pushed;
  }

  /** The kept lines numbered after `after` (default: every kept line), newest first, parsed. */
  recent(after = 0): AuditEntry[] {
    const out: AuditEntry[] = [];
    for (let index = this.lines.length - 1; index >= this.head && this.lines[index]!.seq > after; index--) out.push(JSON.parse(this.lines[index]!.line) as AuditEntry);
    return out;
  }
}
