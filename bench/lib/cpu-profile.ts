/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function, self time per
 * package (or `src/<dir>` for Portcullis's own code), and inclusive time per function, with
 * locations mapped back through source maps to the `.ts` source (Portcullis and the MCP SDK ship
 * maps), so a finding names a file and line a person can open.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionCost {
  /** `functionName (file:line)` with the location source-mapped where possible. */
  name: string;
  location: string;
  group: string;
  selfMs: number;
  totalMs: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Share of samples where the process was idle (waiting on I/O). */
  idleMs: number;
  functions: FunctionCost[];
  groups: { group: string; selfMs: number }[];
  /** Native (C++) self time attributed to the nearest JavaScript caller: who asked for the write. */
  nativeCallers: { native: string; caller: string; location: string; selfMs: number }[];
}

const maps = new Map<string, SourceMap | null>();

function sourceMapFor(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map !== undefined) return map;
  map = null;
  const candidate = `${file}.map`;
  if (existsSync(candidate)) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(candidate, 'utf8')));
    } catch {
      map = null;
    }
  }
  maps.set(file, map);
  return map;
}

/** Maps a generated (0-based) location to `path:line` (1-based), relative to `root`. */
function locate(frame: CallFrame, root: string): { location: string; file: string } {
  if (frame.url === '') return { location: '', file: '' };
  if (!frame.url.startsWith('file://')) return { location: `${frame.url}:${frame.lineNumber + 1}`, file: frame.url };
  const file = fileURLToPath(frame.url);
  const map = sourceMapFor(file);
  if (map !== null && frame.lineNumber >= 0) {
    const entry = map.findEntry(frame.lineNumber, Math.max(0, frame.columnNumber)) as { originalSource?: string; originalLine?: number };
    if (entry.originalSource !== undefined && entry.originalLine !== undefined) {
      const source = entry.originalSource.startsWith('file://') ? fileURLToPath(entry.originalSource) : resolve(dirname(file), entry.originalSource);
      const shown = relative(root, source);
      // A package's map points into sources it does not ship: keep the package prefix readable.
      return { location: `${shown}:${entry.originalLine + 1}`, file: relative(root, file) };
    }
  }
  return { location: `${relative(root, file)}:${frame.lineNumber + 1}`, file: relative(root, file) };
}

/** Which package (or Portcullis folder, or runtime bucket) a frame belongs to. */
export function groupOf(frame: CallFrame, file: string): string {
  if (frame.url === '') {
    if (frame.functionName.startsWith('(')) return frame.functionName;
    return '(native)';
  }
  if (frame.url.startsWith('node:')) return `node:${frame.url.slice(5).split('/')[1] ?? frame.url.slice(5)}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg !== null) return pkg[1]!;
  const own = /^dist\/(src|bench)\/([^/]+)/.exec(file);
  if (own !== null) return own[2]!.endsWith('.js') ? `${own[1]}/${own[2]!.replace(/\.js$/, '.ts')}` : `${own[1]}/${own[2]}/`;
  return file;
}

/**
 * `window` (ms since the profile started, which is within a few ms of process spawn) keeps only
 * the samples of the measured load, leaving out start-up (module loading) and warm-up.
 */
export function summariseProfile(profile: CpuProfile, root: string, window?: { fromMs: number; toMs: number }): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const nodeKey = new Map<number, string>();
  const info = new Map<string, { name: string; location: string; group: string; self: number; total: number }>();
  for (const node of profile.nodes) {
    const { location, file } = locate(node.callFrame, root);
    const name = node.callFrame.functionName || '(anonymous)';
    const key = `${name}@${location}`;
    nodeKey.set(node.id, key);
    if (!info.has(key)) info.set(key, { name, location, group: groupOf(node.callFrame, file), self: 0, total: 0 });
  }

  let totalUs = 0;
  let idleUs = 0;
  const groupSelf = new Map<string, number>();
  const nativeCallers = new Map<string, { native: string; caller: string; location: string; selfMs: number }>();
  let elapsedUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    elapsedUs += profile.timeDeltas[i] ?? 0;
    if (window !== undefined && (elapsedUs < window.fromMs * 1000 || elapsedUs > window.toMs * 1000)) continue;
    // timeDeltas[i + 1] is how long sample i stayed on the CPU.
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    const key = nodeKey.get(id)!;
    const self = info.get(key)!;
    totalUs += dt;
    if (self.name === '(idle)') idleUs += dt;
    self.self += dt;
    groupSelf.set(self.group, (groupSelf.get(self.group) ?? 0) + dt);
    if (self.group === '(native)') {
      let at = parent.get(id);
      // Skip native and Node-internal frames: the first package or Portcullis frame is the one to act on.
      const internal = (g: string) => g === '(native)' || g.startsWith('node:') || g.startsWith('(');
      while (at !== undefined && internal(info.get(nodeKey.get(at)!)!.group)) at = parent.get(at);
      const caller = at === undefined ? undefined : info.get(nodeKey.get(at)!)!;
      const key = `${self.name}<-${caller?.name ?? '?'}@${caller?.location ?? ''}`;
      const entry = nativeCallers.get(key) ?? { native: self.name, caller: caller?.name ?? '?', location: caller?.location ?? '', selfMs: 0 };
      entry.selfMs += dt / 1000;
      nativeCallers.set(key, entry);
    }
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const k = nodeKey.get(at)!;
      if (seen.has(k)) continue;
      seen.add(k);
      info.get(k)!.total += dt;
    }
  }
  const functions = [...info.values()]
    .map((f) => ({ name: f.name, location: f.location, group: f.group, selfMs: f.self / 1000, totalMs: f.total / 1000 }))
    .sort((a, b) => b.selfMs - a.selfMs);
  const groups = [...groupSelf.entries()].map(([group, us]) => ({ group, selfMs: us / 1000 })).sort((a, b) => b.selfMs - a.selfMs);
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    functions,
    groups,
    nativeCallers: [...nativeCallers.values()].sort((a, b) => b.selfMs - a.selfMs),
  };
}
