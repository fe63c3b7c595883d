/**
 * Child process of the search benchmark (`node --expose-gc measure-build.js`): loads the
 * catalogue, then measures what building its index costs in a process that does nothing else —
 * the memory the built index retains after full collections (JS heap plus the typed arrays'
 * backing stores, which V8 counts as external; the catalogue itself is loaded first and not
 * counted) and the wall and CPU time of each of several builds. Prints one JSON line on stdout.
 */
import { buildToolIndex, type ToolIndex } from '../../src/catalogue/search/tool-index.js';
import { loadCatalogue } from './catalogue.js';

export interface BuildMeasurement {
  tools: number;
  /** Retained JS heap plus external (ArrayBuffer) memory. */
  heapBytes: number;
  /** The first build of the process (cold JIT, as the gateway's first snapshot). */
  coldBuildMs: number;
  /** Later builds (as every rebuild after a `list_changed`). */
  buildMs: number[];
  /** CPU time of the process during each of `buildMs`. */
  buildCpuMs: number[];
  coldBuildCpuMs: number;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const rounds = Number(process.argv[2] ?? '10');

const { snapshot } = loadCatalogue();
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

// Memory first, on a fresh heap: one index, kept alive across the second measurement.
const before = settle();
const coldStart = performance.now();
const coldCpu = cpuMs();
const kept: ToolIndex[] = [buildToolIndex(snapshot)];
const coldBuildCpuMs = cpuMs() - coldCpu;
const coldBuildMs = performance.now() - coldStart;
const heapBytes = settle() - before;

const buildMs: number[] = [];
const buildCpuMs: number[] = [];
for (let i = 0; i < rounds; i += 1) {
  const start = performance.now();
  const cpu = cpuMs();
  kept.push(buildToolIndex(snapshot));
  buildCpuMs.push(cpuMs() - cpu);
  buildMs.push(performance.now() - start);
  kept.length = 1;
}
const result: BuildMeasurement = { tools: kept[0]!.size, heapBytes, coldBuildMs, coldBuildCpuMs, buildMs, buildCpuMs };
process.stdout.write(`${JSON.stringify(result)}\n`);
