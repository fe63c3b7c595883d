/**
 * What reading a plugin produces: typed, validated declarations that map one-to-one onto the
 * customisation contract (docs/plugins.md, "What the reader produces") without being wire objects
 * yet. Ids, enablement and lifecycle state belong to whoever publishes them; a declaration carries
 * a durable `key` instead (never sent on the wire), from which stored decisions are looked up.
 */
import type { ServerConfig } from '../config/schema.js';
import type { PluginDiagnostic } from './diagnostics.js';

/** The three directory layouts read, by where the manifest sits. */
export type PluginLayout = 'agent-plugins' | 'open-plugins' | 'claude-code';

/** Zero-based line and UTF-16 code-unit offset in that line (LSP positions). */
export interface TextPosition {
  readonly line: number;
  readonly character: number;
}

export interface TextRange {
  readonly start: TextPosition;
  readonly end: TextPosition;
}

/** The MCP `Icon` shape as the customisation contract spells it. */
export interface Icon {
  readonly src: string;
  readonly contentType?: string;
  readonly sizes?: readonly string[];
  readonly theme?: 'light' | 'dark';
}

/** A plugin's load outcome: `error` disables the whole plugin, `degraded` means entries were skipped. */
export type PluginLoad =
  | { readonly kind: 'loaded' }
  | { readonly kind: 'degraded'; readonly message: string }
  | { readonly kind: 'error'; readonly message: string };

interface PluginServerBase {
  /** Durable key (`plugin:<plugin>#mcp=<server>`) for stored decisions; never on the wire. */
  readonly key: string;
  /** The catalogue name, `<plugin>.<server>`. */
  readonly name: string;
  /** The name the plugin declared it under. */
  readonly serverName: string;
  /** file:// URI of the file that declared the entry. */
  readonly uri: string;
  /** Span of the entry (key through closing brace) in that file. */
  readonly range: TextRange;
}

/**
 * One valid server entry. `supported: true` carries the gateway server config it becomes, with
 * the plugin restrictions already applied (`mode: "optional"`, never `allowPrivateNetwork`).
 * Legacy HTTP+SSE entries are valid declarations the gateway has no transport for: they come back
 * `supported: false` so whoever publishes them can show them as such, never as running.
 */
export type PluginServerDeclaration =
  | (PluginServerBase & { readonly supported: true; readonly config: ServerConfig })
  | (PluginServerBase & { readonly supported: false; readonly transport: 'sse'; readonly reason: string });

/** One agent file: the `AgentCustomization` fields plus the system prompt. */
export interface AgentDeclaration {
  /** Durable key: `plugin:<plugin>#agent=<agent>`, or `agents#agent=<agent>` at gateway level. */
  readonly key: string;
  /** `<plugin>:<agent>` inside a plugin, `<agent>` in the gateway's agents directory. */
  readonly name: string;
  /** The frontmatter `name`. */
  readonly agentName: string;
  /** file:// URI of the agent file (the whole file declares it: no range). */
  readonly uri: string;
  readonly description?: string;
  readonly model?: string;
  /** Absent: no restriction. */
  readonly tools?: readonly string[];
  readonly disableModelInvocation?: boolean;
  readonly disableUserInvocation?: boolean;
  /** The markdown body: the agent's system prompt. */
  readonly body: string;
}

/** Everything read from one plugin directory. */
export interface PluginDeclaration {
  /** Durable key: `plugin:<name>`. */
  readonly key: string;
  /** The manifest `name`; the directory's name when no valid manifest was found. */
  readonly name: string;
  /** Absent when no manifest was found. */
  readonly layout?: PluginLayout;
  readonly version?: string;
  readonly description?: string;
  /** The plugin root, symlinks resolved (also the children's `PLUGIN_ROOT`). */
  readonly root: string;
  /** file:// URI of the manifest (of the directory when there is none). */
  readonly uri: string;
  readonly icons?: readonly Icon[];
  readonly load: PluginLoad;
  /** Every problem found, in reading order; `load` summarises them. */
  readonly diagnostics: readonly PluginDiagnostic[];
  /** Deterministic: in declaration order. Empty when `load` is `error`. */
  readonly servers: readonly PluginServerDeclaration[];
  /** Deterministic: by file name. Empty when `load` is `error`. */
  readonly agents: readonly AgentDeclaration[];
}

export interface ReadPluginOptions {
  /**
   * The gateway's state directory. Each plugin with a stdio server gets `<stateDir>/plugin-data/<name>`
   * (created, mode 0700) as its `PLUGIN_DATA`.
   */
  readonly stateDir: string;
}
