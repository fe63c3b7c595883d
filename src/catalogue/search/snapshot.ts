/**
 * What a tool search index is built from: one catalogue snapshot's visible tools (as `tools/list`
 * would expose them) and the servers they came from. The index holds exactly what it is given,
 * so building it from the visible list is what keeps hidden, disabled and policy-denied tools out
 * of search results (docs/architecture.md, "Catalogue").
 */

/** One visible tool of the merged catalogue. */
export interface SearchableTool {
  /** The exposed (namespaced) name a client calls it by; unique within a snapshot. */
  readonly name: string;
  /** The upstream server that owns it. */
  readonly server: string;
  readonly title?: string;
  readonly description?: string;
  /** The tool's JSON Schema for its arguments; properties (one level deep) are indexed. */
  readonly inputSchema?: unknown;
}

/** A server of the snapshot: its name and the `instructions` it sent in `initialize`, if any. */
export interface SearchableServer {
  readonly name: string;
  readonly instructions?: string;
}

export interface ToolSnapshot {
  readonly tools: readonly SearchableTool[];
  readonly servers: readonly SearchableServer[];
}
