/**
 * The audit log's in-memory ring of recent lines (the admin page's source): bounded in count and
 * in bytes, oldest out first, and fed with exactly the lines the sink writes.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog, auditLine, type AuditRecord } from '../../src/observability/audit-log.js';
import { AuditRing, DEFAULT_AUDIT_RING } from '../../src/observability/audit-ring.js';
import { fileAuditSink } from '../../src/observability/audit-sink.js';
import { silentLogger } from '../../src/observability/logger.js';

const record = (index: number, tool = `tool_${index}`): AuditRecord => ({ started: Date.UTC(2026, 0, 1, 0, 0, index), method: 'tools/call', endpoint: 'aggregate', tool, decision: 'allowed', durationMs: 1, id: index });

describe('the audit ring', () => {
  it('keeps at most maxEntries lines, newest first, dropping the oldest', () => {
    const ring = new AuditRing({ maxEntries: 3, maxBytes: 1_000_000 });
    for (let index = 0; index < 10; index++) ring.push(auditLine(record(index)));
    expect(ring.size).toBe(3);
    expect(ring.recent().map((entry) => entry.id)).toEqual([9, 8, 7]);
  });

  it('keeps the lines under maxBytes, dropping the oldest; a line over the bound alone is not kept', () => {
    const one = Buffer.byteLength(auditLine(record(10)));
    const ring = new AuditRing({ maxEntries: 100, maxBytes: one * 2 + 1 });
    for (let index = 10; index < 40; index++) ring.push(auditLine(record(index)));
    expect(ring.recent().map((entry) => entry.id)).toEqual([39, 38]);
    expect(ring.bytes).toBeLessThanOrEqual(one * 2 + 1);
    ring.push(auditLine(record(40, 'x'.repeat(one * 3))));
    expect(ring.recent().map((entry) => entry.id)).toEqual([39, 38]);
  });

  it('numbers every line recorded, so a page asks only for the lines after the last it has', () => {
    const ring = new AuditRing({ maxEntries: 3, maxBytes: 1_000_000 });
    expect(ring.latest).toBe(0);
    expect(ring.recent(0)).toEqual([]);
    for (let index = 0; index < 5; index++) ring.push(auditLine(record(index)));
    expect(ring.latest).toBe(5);
    expect(ring.recent(3).map((entry) => entry.id)).toEqual([4, 3]); // lines 4 and 5 (ids count from 0)
    expect(ring.recent(5)).toEqual([]);
    // Lines evicted since: only the kept ones come back.
    expect(ring.recent(0).map((entry) => entry.id)).toEqual([4, 3, 2]);
    // A line too large to keep still takes its number: the page never waits for it.
    const tiny = new AuditRing({ maxEntries: 3, maxBytes: 10 });
    tiny.push(auditLine(record(0)));
    expect(tiny.latest).toBe(1);
    expect(tiny.recent(0)).toEqual([]);
  });

  it('counts bytes, not characters: multi-byte names fill the byte bound sooner', () => {
    const ring = new AuditRing({ maxEntries: 100, maxBytes: 4_000 });
    for (let index = 0; index < 50; index++) ring.push(auditLine(record(index, '€'.repeat(500))));
    expect(ring.bytes).toBeLessThanOrEqual(4_000);
    expect(ring.size).toBe(2); // each line holds 512 × 3 bytes of tool name, cut at 512 characters
  });

  it('stays within both bounds under a long hostile stream of maximal lines', () => {
    const ring = new AuditRing(DEFAULT_AUDIT_RING);
    for (let index = 0; index < 5_000; index++) ring.push(auditLine(record(index, `${'ж'.repeat(600)}${index}`)));
    expect(ring.size).toBeLessThanOrEqual(DEFAULT_AUDIT_RING.maxEntries);
    expect(ring.bytes).toBeLessThanOrEqual(DEFAULT_AUDIT_RING.maxBytes);
    expect(ring.recent()[0]?.id).toBe(4_999);
  });

  it('is fed by AuditLog.record with the very lines the sink writes', () => {
    const dir = mkdtempSync(join(tmpdir(), 'portcullis-audit-ring-'));
    try {
      const file = join(dir, 'audit.jsonl');
      const audit = new AuditLog(fileAuditSink({ path: file, maxBytes: 1_000_000, maxFiles: 1, logger: silentLogger() }), { maxEntries: 2, maxBytes: 10_000 });
      for (let index = 0; index < 4; index++) audit.record(record(index));
      audit.close();
      const written = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown);
      expect(written).toHaveLength(4);
      expect(audit.recent.recent()).toEqual([written[3], written[2]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
