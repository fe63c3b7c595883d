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
  /** Schema object → where its tool was last indexed (held as long as the listed tool is). */
  private readonly placed = new WeakMap<object, Placement>();
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
    const same = this.unchanged(server, instructions, tools);
    if (same !== undefined) return same;
    const source = segmentSource(server, instructions, tools);
    let segment = this.segments.get(source.key);
    if (segment === undefined) {
      segment = buildSegment(source);
      this.built += 1;
      this.segments.set(source.key, segment);
    }
    this.place(segment, tools);
    return segment;
  }

  /**
   * The fast path for a server whose list did not change: its tools carry the very schema objects
   * (a cached list hands the same ones to every merge) that were placed, in the same order, in a
   * segment of the same server, with the same names, titles, descriptions and instructions — then
   * the content is that segment's without reading or hashing it. Anything else goes by content.
   */
  private unchanged(server: string, instructions: string | undefined, tools: readonly SearchableTool[]): ServerSegment | undefined {
    const first = tools[0]?.inputSchema;
    if (first === null || typeof first !== 'object') return undefined;
    const segment = this.placed.get(first)?.segment;
    if (segment === undefined || segment.server !== server || segment.instructions !== instructions || segment.names.length !== tools.length) return undefined;
    for (let at = 0; at < tools.length; at += 1) {
      const tool = tools[at] as SearchableTool;
      const schema = tool.inputSchema;
      const placed = schema !== null && typeof schema === 'object' ? this.placed.get(schema) : undefined;
      if (placed?.segment !== segment || placed.at !== at || segment.names[at] !== tool.name || placed.title !== tool.title || placed.description !== tool.description) return undefined;
    }
    return segment;
  }

  private place(segment: ServerSegment, tools: readonly SearchableTool[]): void {
    if (segment.names.length !== tools.length) return;
    tools.forEach((tool, at) => {
      const schema = tool.inputSchema;
      if (schema !== null && typeof schema === 'object') this.placed.set(schema, { segment, at, title: tool.title, description: tool.description });
    });
  }
}

/** Where a tool (known by its schema object) was indexed, with the texts it had then. */
interface Placement {
  readonly segment: ServerSegment;
  readonly at: number;
  readonly title: string | undefined;
  readonly description: string | undefined;
}
