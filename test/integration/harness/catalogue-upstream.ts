/**
 * The benchmark catalogue as real upstreams: one child process (test/fixtures/catalogue-server.ts)
 * serving each of its ~100 servers on its own Streamable HTTP path on 127.0.0.1, and the gateway
 * server entries that point at them. Stopped by pid through `cleanup`.
 */
import { spawnUntilReady } from '../../fixtures/spawn-until-ready.js';
import { ROOT } from './paths.js';
import { httpServer } from './upstreams.js';
import type { Cleanup } from './wait.js';

export const CATALOGUE_JS = `${ROOT}dist/test/fixtures/catalogue-server.js`;

export interface CatalogueUpstream {
  /** Benchmark server names, in the fixture's order. */
  readonly names: readonly string[];
  /** Gateway server entries, one per benchmark server; `extra[name]` is merged into that entry. */
  servers(extra?: Record<string, Record<string, unknown>>, common?: Record<string, unknown>): Record<string, unknown>;
}

export async function startCatalogueUpstream(cleanup: Cleanup, only?: readonly string[]): Promise<CatalogueUpstream> {
  const args = only === undefined ? [CATALOGUE_JS] : [CATALOGUE_JS, '--only', only.join(',')];
  const fixture = await spawnUntilReady(process.execPath, args, { label: 'catalogue fixture', ready: /^CATALOGUE_READY (.+)$/, timeoutMs: 30_000 });
  cleanup.add(() => fixture.stop());
  const [base, ...names] = fixture.match.split(' ') as [string, ...string[]];
  return {
    names,
    servers: (extra = {}, common = {}) =>
      Object.fromEntries(names.map((name) => [name, httpServer(`${base}/${name}`, { isolation: 'shared', ...common, ...extra[name] })])),
  };
}
