/**
 * The generated part of the benchmark catalogue: every server of `generator/servers.ts` expanded
 * deterministically from one seed (the same tools, names, words and schemas on every run).
 */
import type { RecordedServer } from './catalogue-types.js';
import { expandServer } from './generator/expand.js';
import { FAMILIES, GENERATED_SERVERS } from './generator/servers.js';

export const GENERATOR_SEED = 20_261_201;

export function generateServers(seed: number = GENERATOR_SEED): RecordedServer[] {
  return GENERATED_SERVERS.map((server) => {
    const family = FAMILIES[server.family];
    if (family === undefined) throw new TypeError(`generated server ${server.name}: unknown family ${server.family}`);
    return expandServer(server, family, seed);
  });
}
