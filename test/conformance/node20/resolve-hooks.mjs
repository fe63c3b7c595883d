// Module resolve hook: inside the conformance packages (installed under their own name or an npm
// alias whose name contains "conformance"), `fs` / `node:fs` resolve to fs-with-globsync.mjs when
// this Node has no fs.globSync. Every other importer gets the real module.
import fs from 'node:fs';

const lacksGlobSync = typeof fs.globSync !== 'function';
const insideConformance = /\/node_modules\/(?:@modelcontextprotocol\/)?[^/]*conformance[^/]*\//;

export async function resolve(specifier, context, nextResolve) {
  const wantsFs = specifier === 'fs' || specifier === 'node:fs';
  if (lacksGlobSync && wantsFs && insideConformance.test(context.parentURL ?? '')) {
    return { url: new URL('./fs-with-globsync.mjs', import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
