/**
 * Pure per-method merge functions for fan-out: each takes the per-server answers, in the fixed
 * server order the caller chose (config order, never arrival order), and returns the merged
 * answer plus the index that routes a later call to its one owning server (docs/decisions.md,
 * "Names and routing").
 *
 * No I/O and no logging: every collision or rejection is returned for the caller to log.
 */
import type { Prompt, Resource, ResourceTemplateType, ServerCapabilities, Tool } from '@modelcontextprotocol/server';

import { compileUriTemplate, type TemplateRoute, type UriTemplateMatcher } from './build-index.js';
import { assignNames, type NameCollision, type UpstreamName } from '../naming/names.js';
import { mergeUiExtension, UI_EXTENSION } from './ui-uris.js';

export type { TemplateRoute } from './build-index.js';

/**
 * Decides whether an upstream tool (or prompt) is visible. Gets the upstream's `server` and
 * original `name` (for the per-server `enabledTools`/`disabledTools` filter) and the `exposed`
 * name (for policy globs on namespaced names). The router calls the same predicate, with the
 * same three values from the index, to re-check a call.
 *
 * Policy globs: an exposed name may be shortened, hash-suffixed or un-namespaced (separator
 * `null`), so a deny glob is best tested on a canonical name built from `server` and `name` too.
 */
export type VisibilityFilter = (server: string, name: string, exposed: string) => boolean;

export interface NamedMergeOptions {
  /** Separator between server and name; `null` exposes names unprefixed. */
  readonly separator: string | null;
  readonly filter: VisibilityFilter;
  /** Longest exposed name; defaults to 64 (see naming/names.ts). */
  readonly maxNameLength?: number;
}

/** What {@link mergeTools} and {@link mergePrompts} share besides the merged list. */
export interface NamedMergeIndex {
  /** Exposed name → owning server and upstream name, visible items only. */
  readonly index: Map<string, UpstreamName>;
  readonly collisions: readonly NameCollision[];
  /** Later copies of a name one server listed twice (the first copy is kept). */
  readonly duplicates: readonly UpstreamName[];
}

export interface MergedTools extends NamedMergeIndex {
  /** Visible tools with `name` replaced by the exposed name; every other field (title too) kept. */
  readonly tools: Tool[];
}

export interface MergedPrompts extends NamedMergeIndex {
  /** Visible prompts with `name` replaced by the exposed name; every other field kept. */
  readonly prompts: Prompt[];
}

/**
 * Merges `tools/list` answers. Names are assigned over **every** listed tool before the filter
 * runs, so a tool's exposed name depends only on the upstream catalogues, never on policy or
 * per-session toggles: hiding one tool never renames another, and the name a client learnt stays
 * valid. The filter then decides visibility on (server, original name, exposed name).
 *
 * The result is ordered by exposed name (UTF-16 code units, never locale): the same set of tools
 * always lists in the same order, whatever order upstreams answer in or list their tools in
 * (MCP 2026-07-28 server/tools: servers SHOULD return tools in a deterministic order, so clients
 * can cache the list and LLM prompt caches hit).
 */
export function mergeTools(
  parts: ReadonlyArray<{ server: string; tools: readonly Tool[] }>,
  options: NamedMergeOptions,
): MergedTools {
  const { items, ...rest } = mergeNamed(parts.map((p) => ({ server: p.server, items: p.tools })), options);
  return { tools: items.sort(byName), ...rest };
}

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Merges `prompts/list` answers exactly like {@link mergeTools} (prompts are a separate namespace). */
export function mergePrompts(
  parts: ReadonlyArray<{ server: string; prompts: readonly Prompt[] }>,
  options: NamedMergeOptions,
): MergedPrompts {
  const { items, ...rest } = mergeNamed(parts.map((p) => ({ server: p.server, items: p.prompts })), options);
  return { prompts: items, ...rest };
}

function mergeNamed<T extends { name: string }>(
  parts: ReadonlyArray<{ server: string; items: readonly T[] }>,
  options: NamedMergeOptions,
): NamedMergeIndex & { items: T[] } {
  const firsts: Array<{ server: string; item: T }> = [];
  const duplicates: UpstreamName[] = [];
  for (const { server, items } of parts) {
    const seen = new Set<string>();
    for (const item of items) {
      if (seen.has(item.name)) duplicates.push({ server, name: item.name });
      else firsts.push({ server, item });
      seen.add(item.name);
    }
  }

  const names = assignNames(
    firsts.map(({ server, item }) => ({ server, name: item.name })),
    options.separator,
    options.maxNameLength === undefined ? {} : { maxLength: options.maxNameLength },
  );

  const items: T[] = [];
  const index = new Map<string, UpstreamName>();
  for (const { server, item } of firsts) {
    const exposed = names.exposedFor(server, item.name) as string;
    if (!options.filter(server, item.name, exposed)) continue;
    items.push({ ...item, name: exposed });
    index.set(exposed, { server, name: item.name });
  }
  return { items, index, collisions: names.collisions, duplicates };
}

/** The same URI (or URI template) listed more than once; `kept` owns it. */
export interface UriCollision {
  readonly uri: string;
  readonly kept: string;
  readonly dropped: string;
}

/**
 * Merges `resources/list` answers. URIs are global identifiers and keep their value (not
 * namespaced); on a repeated URI the first server in `parts` order owns it and the repeat is
 * dropped and reported.
 */
export function mergeResources(parts: ReadonlyArray<{ server: string; resources: readonly Resource[] }>): {
  resources: Resource[];
  index: Map<string, string>;
  collisions: UriCollision[];
} {
  const resources: Resource[] = [];
  const index = new Map<string, string>();
  const collisions: UriCollision[] = [];
  for (const { server, resources: listed } of parts) {
    for (const resource of listed) {
      const owner = index.get(resource.uri);
      if (owner !== undefined) {
        collisions.push({ uri: resource.uri, kept: owner, dropped: server });
        continue;
      }
      index.set(resource.uri, server);
      resources.push(resource);
    }
  }
  return { resources, index, collisions };
}

/**
 * Merges `resources/templates/list` answers into the list for clients and the ordered routes
 * for {@link routeResourceUri} (templates compiled here, once). A template the SDK's
 * `UriTemplate` cannot parse or match (see `compileUriTemplate`) is left out of both (it could
 * not be routed) and reported in `rejected`; a repeated template string keeps its first server in `parts` order.
 */
export function mergeResourceTemplates(
  parts: ReadonlyArray<{ server: string; resourceTemplates: readonly ResourceTemplateType[] }>,
): {
  resourceTemplates: ResourceTemplateType[];
  routes: TemplateRoute[];
  collisions: UriCollision[];
  rejected: Array<{ server: string; uriTemplate: string }>;
} {
  const resourceTemplates: ResourceTemplateType[] = [];
  const routes: TemplateRoute[] = [];
  const collisions: UriCollision[] = [];
  const rejected: Array<{ server: string; uriTemplate: string }> = [];
  const ownerByTemplate = new Map<string, string>();
  for (const { server, resourceTemplates: listed } of parts) {
    for (const entry of listed) {
      const owner = ownerByTemplate.get(entry.uriTemplate);
      if (owner !== undefined) {
        collisions.push({ uri: entry.uriTemplate, kept: owner, dropped: server });
        continue;
      }
      let matcher: UriTemplateMatcher;
      try {
        matcher = compileUriTemplate(entry.uriTemplate);
      } catch {
        rejected.push({ server, uriTemplate: entry.uriTemplate });
        continue;
      }
      ownerByTemplate.set(entry.uriTemplate, server);
      resourceTemplates.push(entry);
      routes.push({ server, uriTemplate: entry.uriTemplate, matcher });
    }
  }
  return { resourceTemplates, routes, collisions, rejected };
}

/**
 * The union of upstream capabilities, for the gateway's own `initialize` / `server/discover`:
 * - `tools`, `prompts`, `resources` present if any upstream has them; `listChanged` and
 *   `subscribe` present if any upstream set them, `true` if any set `true`;
 * - `logging`, `completions` present (as `{}`) if any upstream has them;
 * - `experimental` merged by key, the first server in `parts` order winning;
 * - `tasks` and `extensions` are left out: the endpoint adds what the gateway itself answers (the
 *   tasks of routing/tasks/), and advertising what it cannot relay would make clients send
 *   requests that fail. The one extension relayed is MCP Apps (`io.modelcontextprotocol/ui`,
 *   ui-uris.ts), present only when some upstream advertises it: its tools, `ui://` resources and
 *   reads are plain MCP the gateway passes through.
 * A capability the gateway provides itself (e.g. `tools.listChanged` for deferral) is the
 * caller's to add.
 */
export function mergeCapabilities(
  parts: ReadonlyArray<{ server: string; capabilities: ServerCapabilities | undefined }>,
): ServerCapabilities {
  const merged: ServerCapabilities = {};
  for (const { capabilities: caps } of parts) {
    if (caps === undefined) continue;
    if (caps.tools) merged.tools = orFlags(merged.tools, caps.tools, ['listChanged']);
    if (caps.prompts) merged.prompts = orFlags(merged.prompts, caps.prompts, ['listChanged']);
    if (caps.resources) merged.resources = orFlags(merged.resources, caps.resources, ['subscribe', 'listChanged']);
    if (caps.logging) merged.logging = {};
    if (caps.completions) merged.completions = {};
    if (caps.experimental) {
      merged.experimental = { ...caps.experimental, ...merged.experimental };
    }
  }
  const apps = mergeUiExtension(parts.map((p) => uiExtensionOf(p.capabilities)));
  if (apps !== undefined) merged.extensions = { [UI_EXTENSION]: apps } as ServerCapabilities['extensions'];
  return merged;
}

/** The MCP Apps settings `capabilities` advertises, when it advertises the extension. */
export function uiExtensionOf(capabilities: ServerCapabilities | undefined): Record<string, unknown> | undefined {
  const settings = (capabilities?.extensions as Record<string, unknown> | undefined)?.[UI_EXTENSION];
  return typeof settings === 'object' && settings !== null && !Array.isArray(settings) ? (settings as Record<string, unknown>) : undefined;
}

function orFlags<K extends string>(
  current: Partial<Record<K, boolean>> | undefined,
  next: Partial<Record<K, boolean>>,
  flags: readonly K[],
): Partial<Record<K, boolean>> {
  const result: Partial<Record<K, boolean>> = { ...current };
  for (const flag of flags) {
    const value = next[flag];
    if (typeof value === 'boolean') result[flag] = result[flag] === true || value;
  }
  return result;
}

/**
 * The gateway's instructions: its own text first, then each upstream's, labelled
 * `## <server>` in `parts` order. Blank texts are skipped; `undefined` when nothing is left.
 * Upstream instructions are untrusted text that reaches the model; the label shows its origin.
 */
export function mergeInstructions(
  gatewayText: string | undefined,
  parts: ReadonlyArray<{ server: string; instructions?: string | undefined }>,
): string | undefined {
  const sections: string[] = [];
  if (gatewayText !== undefined && gatewayText.trim() !== '') sections.push(gatewayText.trim());
  for (const { server, instructions } of parts) {
    if (instructions === undefined || instructions.trim() === '') continue;
    sections.push(`## ${server}\n${instructions.trim()}`);
  }
  return sections.length === 0 ? undefined : sections.join('\n\n');
}
