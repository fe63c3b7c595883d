/**
 * Segments by content: the one place a server's tools are tokenised. An index for a new snapshot
 * asks for each server's segment with that server's visible tools; a server whose tools read the
 * same as before (its list unchanged, re-listed with the same definitions, or listed the same by
 * another session's own connection) gets the very segment it had, so a `list_changed` from one
 * server tokenises that server alone and sessions share the postings of identical definitions.
 *
 * Bounded in segments and bytes (least recently used dropped first); a segment that indexes still
 * hold stays alive with them, and one dropped here is only rebuilt if asked for again.
 */
import { LRUCache } from 'lru-cache';
import { buildSegment, segmentSource, type ServerSegment } from './segment.js';
import type { SearchableTool } from './snapshot.js';

export interface SegmentCacheOptions {
  /** Most segments kept. */
  readonly maxSegments: number;
  /** Most bytes kept, by each segment's estimate. */
  readonly maxBytes: number;
}

export const DEFAULT_SEGMENT_CACHE: SegmentCacheOptions = { maxSegments: 1_024, maxBytes: 64 * 2 ** 20 };

export class SegmentCache {
  private readonly segments: LRUCache<string, ServerSegment>;
  private built = 0;

  constructor(options: SegmentCacheOptions = DEFAULT_SEGMENT_CACHE) {
    if (!Number.isInteger(options.maxSegments) || options.maxSegments < 1) throw new TypeError('segment cache: maxSegments must be a positive integer');
    if (!Number.isInteger(options.maxBytes) || options.maxBytes < 1) throw new TypeError('segment cache: maxBytes must be a positive integer');
    this.segments = new LRUCache({ max: options.maxSegments, maxSize: options.maxBytes, sizeCalculation: (segment) => Math.max(1, segment.bytes) });
  }

  /** Segments tokenised so far (cache misses): what a rebuild cost, for tests and diagnostics. */
  get builds(): number {
    return this.built;
  }

  /** The segment of `server`'s `tools` (visible ones, exposed names) with its `instructions`. */
  segmentFor(server: string, instructions: string | undefined, tools: readonly SearchableTool[]): ServerSegment {
    const source = segmentSource(server, instructions, tools);
    const cached = this.segments.get(source.key);
    if (cached !== undefined) return cached;
    const segment = buildSegment(source);
    this.built += 1;
    this.segments.set(source.key, segment);
    return segment;
  }
}
