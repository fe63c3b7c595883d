/**
 * Child process of the search benchmark (`node --expose-gc measure-build.js N`): loads the
 * project catalogue (5,074 tools), then measures what building and keeping its index costs in a
 * process that does nothing else, the way the gateway builds it (a segment per server through a
 * `SegmentCache`, assembled into an index):
 *
 * - the memory the first index and its cache retain after full collections (JS heap plus the
 *   typed arrays' backing stores, which V8 counts as external; the catalogue is loaded first);
 * - a full build: the first one of the process (cold JIT), then N more with an empty cache;
 * - a one-server rebuild: the largest server's list changed (one description edited), every other
 *   server's tools unchanged — what a `list_changed` from one server costs;
 * - an unchanged re-list: every server's tools listed again as new objects with the same content —
 *   what an upstream whose lists carry `ttlMs: 0` costs per call; it must tokenise nothing.
 *
 * Wall and CPU time of each; prints one JSON line on stdout.
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
  /** The server whose list changed in `oneServer`, and its number of tools. */
  changedServer: { name: string; tools: number };
  oneServer: Timing;
  unchanged: Timing;
  /** Segments tokenised by the unchanged re-lists (must be 0) and by the one-server rebuilds (1 each). */
  unchangedBuilds: number;
  oneServerBuilds: number;
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
const build = (cache: SegmentCache, servers: ReadonlyMap<string, readonly SearchableTool[]>): ToolIndex =>
  assembleToolIndex([...servers].map(([server, tools]) => cache.segmentFor(server, instructions.get(server), tools)));

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

const [changedName, changedTools] = [...byServer].reduce((a, b) => (b[1].length > a[1].length ? b : a));
const oneServer = timing();
const buildsBeforeOne = cache.builds;
for (let i = 0; i < rounds; i += 1) {
  const edited = new Map(byServer);
  edited.set(changedName, changedTools.map((tool, t) => (t === 0 ? { ...tool, description: `${tool.description ?? ''} (revision ${i})` } : tool)));
  kept.push(timed(oneServer, () => build(cache, edited)));
  kept.length = 1;
}
const oneServerBuilds = cache.builds - buildsBeforeOne;

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
  changedServer: { name: changedName, tools: changedTools.length },
  oneServer,
  unchanged,
  unchangedBuilds: cache.builds - buildsBeforeUnchanged,
  oneServerBuilds,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
