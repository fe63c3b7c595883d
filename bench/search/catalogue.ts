/**
 * The benchmark catalogue: the recorded real servers plus the generated ones, merged the way the
 * gateway merges them (`mergeTools`, default `__` separator), as the snapshot a search index is
 * built from.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Tool } from '@modelcontextprotocol/server';
import { mergeTools } from '../../src/catalogue/merge.js';
import type { ToolSnapshot } from '../../src/catalogue/search/snapshot.js';
import type { RecordedServer } from './catalogue-types.js';
import { generateServers } from './generate-servers.js';

/** The repository root, whether this runs compiled (dist/bench/search/) or from source (bench/search/). */
const HERE = fileURLToPath(new URL('.', import.meta.url));
const ROOT = HERE.includes('/dist/bench/') ? HERE.slice(0, HERE.lastIndexOf('/dist/bench/') + 1) : fileURLToPath(new URL('../../', import.meta.url));
const REAL = `${ROOT}bench/search/data/real-servers.json`;

export function realServers(): RecordedServer[] {
  return (JSON.parse(readFileSync(REAL, 'utf8')) as { servers: RecordedServer[] }).servers;
}

export interface BenchCatalogue {
  readonly snapshot: ToolSnapshot;
  readonly servers: readonly RecordedServer[];
  /** Tools per origin, for the report. */
  readonly counts: { realServers: number; realTools: number; generatedServers: number; generatedTools: number };
}

export function loadCatalogue(): BenchCatalogue {
  const real = realServers();
  const generated = generateServers();
  const servers = [...real, ...generated];
  const names = new Set<string>();
  for (const s of servers) {
    if (names.has(s.server)) throw new TypeError(`benchmark catalogue: server name ${s.server} used twice`);
    names.add(s.server);
  }
  const merged = mergeTools(
    servers.map((s) => ({ server: s.server, tools: s.tools as Tool[] })),
    { separator: '__', filter: () => true },
  );
  const serverOf = new Map([...merged.index].map(([exposed, upstream]) => [exposed, upstream.server]));
  return {
    snapshot: {
      tools: merged.tools.map((t) => ({ name: t.name, server: serverOf.get(t.name) ?? '', title: t.title, description: t.description, inputSchema: t.inputSchema })),
      servers: servers.map((s) => ({ name: s.server, ...(s.instructions === undefined ? {} : { instructions: s.instructions }) })),
    },
    servers,
    counts: {
      realServers: real.length,
      realTools: real.reduce((n, s) => n + s.tools.length, 0),
      generatedServers: generated.length,
      generatedTools: generated.reduce((n, s) => n + s.tools.length, 0),
    },
  };
}
