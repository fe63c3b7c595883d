/**
 * The evaluation sets of tool search: a catalogue and the queries asked of it, each built
 * separately, so a ranking tuned on one is seen on another.
 *
 * - `project`: the project's own benchmark catalogue (37 real servers' recorded tools and 72
 *   generated servers, 5,074 tools) and its 288 queries (`queries.ts`).
 * - `real`: the 37 real servers alone (1,403 tools) and 364 queries written for them before any
 *   ranking was run on them (`real-queries.ts`).
 *
 * For cross-validation every server belongs to a group: a real server is its own group, a
 * generated one shares its family's (servers of one family are expanded from the same text, so
 * holding out one while tuning on its sibling would not be holding it out).
 */
import type { Tool } from '@modelcontextprotocol/server';
import { mergeTools } from '../../src/catalogue/merge.js';
import type { ToolSnapshot } from '../../src/catalogue/search/snapshot.js';
import { identifierWords } from '../../src/catalogue/search/tokenize.js';
import type { RecordedServer } from './catalogue-types.js';
import { loadCatalogue, realServers } from './catalogue.js';
import { expectedNames } from './evaluate.js';
import { GENERATED_SERVERS } from './generator/servers.js';
import { QUERIES, type BenchQuery } from './queries.js';
import { REAL_QUERIES } from './real-queries.js';

export interface EvaluationSet {
  readonly name: string;
  /** What it is, for the report. */
  readonly title: string;
  readonly snapshot: ToolSnapshot;
  readonly queries: readonly BenchQuery[];
  /** Upstream tool name of each exposed name, for the "shares no word with the name" count. */
  readonly upstreamNames: ReadonlyMap<string, string>;
}

const familyOf = new Map(GENERATED_SERVERS.map((s) => [s.name, `family:${s.family}`]));

/** The cross-validation group of a server (see the module comment). */
export function groupOf(server: string): string {
  return familyOf.get(server) ?? server;
}

function snapshotOf(servers: readonly RecordedServer[]): { snapshot: ToolSnapshot; upstreamNames: Map<string, string> } {
  const merged = mergeTools(
    servers.map((s) => ({ server: s.server, tools: s.tools as Tool[] })),
    { separator: '__', filter: () => true },
  );
  return {
    snapshot: {
      tools: merged.tools.map((t) => ({ name: t.name, server: merged.index.get(t.name)?.server ?? '', title: t.title, description: t.description, inputSchema: t.inputSchema })),
      servers: servers.map((s) => ({ name: s.server, ...(s.instructions === undefined ? {} : { instructions: s.instructions }) })),
    },
    upstreamNames: new Map([...merged.index].map(([exposed, upstream]) => [exposed, upstream.name])),
  };
}

export function evaluationSets(): EvaluationSet[] {
  const project = loadCatalogue();
  const real = realServers();
  const projectParts = snapshotOf(project.servers);
  const realParts = snapshotOf(real);
  return [
    { name: 'project', title: `the project's catalogue (${projectParts.snapshot.tools.length} tools, ${project.servers.length} servers) and queries`, queries: QUERIES, ...projectParts },
    { name: 'real', title: `${real.length} real npm servers alone (${realParts.snapshot.tools.length} tools), queries written before ranking`, queries: REAL_QUERIES, ...realParts },
  ];
}

/** Whether a query shares no word with any accepted tool's upstream name (words split and lower-cased, a plural `s` aside). */
export function sharesNoNameWord(query: BenchQuery, upstreamNames: ReadonlyMap<string, string>): boolean {
  const norm = (word: string) => word.toLowerCase().replace(/ies$/, 'y').replace(/s$/, '');
  const words = new Set((query.q.match(/[A-Za-z0-9]+/g) ?? []).map(norm));
  return expectedNames(query).every((name) => !identifierWords(upstreamNames.get(name) ?? name).some((word) => words.has(norm(word))));
}
