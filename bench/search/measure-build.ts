/**
 * Child process of the search benchmark (`node --expose-gc measure-build.js N`): loads the
 * project catalogue (5,074 tools), then measures what building and keeping its index costs in a
 * process that does nothing else, the way the gateway builds it (a segment per server through a
 * `SegmentCache`, assembled into an index):
 *
 * - the memory the first index and its cache retain after full collections (JS heap plus the
 *   typed arrays' backing stores, which V8 counts as external; the catalogue is loaded first);
 * - a full build: the first one of the process (cold JIT), then N more with an empty cache;
 * - a one-server rebuild: one server's list changed (one description edited), every other
 *   server's tools unchanged — what a `list_changed` from one server costs — for a server of
 *   median size and for the largest;
 * - an unchanged re-list: every server's tools listed again as new objects with the same content —
 *   what an upstream whose lists carry `ttlMs: 0` costs per call; it must tokenise nothing.
 *
 * Each build is timed until the index has answered its first search (which gathers the segments'
 * vocabularies), wall and CPU time; prints one JSON line on stdout.
 */
import { SegmentCache } from '../../src/catalogue/search/segment-cache.js';
import type { SearchableTool } from '../../src/catalogue/search/snapshot.js';
import { assembleToolIndex, type ToolIndex } from '../../src/catalogue/search/tool-index.js';
import { loadCatalogue } from './catalogue.js';

export interface Timing {
  wallMs: number[];
  cpuMs: number[];
}

export interface BuildMeasurement {
  tools: number;
  /** Retained JS heap plus external (ArrayBuffer) memory of one index and its segment cache. */
  heapBytes: number;
  cold: Timing;
  full: Timing;
  /** One-server rebuilds: a server of median size, and the largest one. */
  oneServer: { typical: Rebuild; largest: Rebuild };
  unchanged: Timing;
  /** Segments tokenised by the unchanged re-lists (must be 0). */
  unchangedBuilds: number;
}

export interface Rebuild {
  server: string;
  tools: number;
  timing: Timing;
  /** Segments tokenised (one per rebuild). */
  builds: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const rounds = Number(process.argv[2] ?? '10');

const { snapshot } = loadCatalogue();
const instructions = new Map(snapshot.servers.map((s) => [s.name, s.instructions]));
const byServer = new Map<string, SearchableTool[]>();
for (const tool of snapshot.tools) {
  let tools = byServer.get(tool.server);
  if (tools === undefined) byServer.set(tool.server, (tools = []));
  tools.push(tool);
}
/** Builds until searchable: the segments, the assembly, and the first search (which gathers the vocabulary). */
const build = (cache: SegmentCache, servers: ReadonlyMap<string, readonly SearchableTool[]>): ToolIndex => {
  const index = assembleToolIndex([...servers].map(([server, tools]) => cache.segmentFor(server, instructions.get(server), tools)));
  index.search('list', { limit: 1 });
  return index;
};

const settle = () => {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const timed = <T>(timing: Timing, work: () => T): T => {
  const wall = performance.now();
  const cpu = cpuMs();
  const result = work();
  timing.cpuMs.push(cpuMs() - cpu);
  timing.wallMs.push(performance.now() - wall);
  return result;
};
const timing = (): Timing => ({ wallMs: [], cpuMs: [] });

// Memory first, on a fresh heap: the first index and the cache it filled, kept alive.
const before = settle();
const cold = timing();
const cache = new SegmentCache();
const kept: ToolIndex[] = [timed(cold, () => build(cache, byServer))];
const heapBytes = settle() - before;

const full = timing();
for (let i = 0; i < rounds; i += 1) timed(full, () => build(new SegmentCache(), byServer));

/** Rebuilds after `server`'s list changed (one description edited per round), every other server's tools the same objects. */
const rebuilds = (server: string): { timing: Timing; builds: number } => {
  const tools = byServer.get(server) as SearchableTool[];
  const result = timing();
  const before = cache.builds;
  for (let i = 0; i < rounds; i += 1) {
    const edited = new Map(byServer);
    edited.set(server, tools.map((tool, t) => (t === 0 ? { ...tool, description: `${tool.description ?? ''} (revision ${i})` } : tool)));
    kept.push(timed(result, () => build(cache, edited)));
    kept.length = 1;
  }
  return { timing: result, builds: cache.builds - before };
};
const bySize = [...byServer].sort((a, b) => a[1].length - b[1].length || (a[0] < b[0] ? -1 : 1));
const [typicalName, typicalTools] = bySize[bySize.length >> 1] as [string, SearchableTool[]];
const [largestName, largestTools] = bySize[bySize.length - 1] as [string, SearchableTool[]];
const typical = rebuilds(typicalName);
const largest = rebuilds(largestName);

const unchanged = timing();
const buildsBeforeUnchanged = cache.builds;
for (let i = 0; i < rounds; i += 1) {
  const relisted = new Map([...byServer].map(([server, tools]) => [server, JSON.parse(JSON.stringify(tools)) as SearchableTool[]]));
  kept.push(timed(unchanged, () => build(cache, relisted)));
  kept.length = 1;
}
const result: BuildMeasurement = {
  tools: kept[0]!.size,
  heapBytes,
  cold,
  full,
  oneServer: {
    typical: { server: typicalName, tools: typicalTools.length, ...typical },
    largest: { server: largestName, tools: largestTools.length, ...largest },
  },
  unchanged,
  unchangedBuilds: cache.builds - buildsBeforeUnchanged,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
