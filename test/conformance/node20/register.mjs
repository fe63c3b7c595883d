// Loaded with `node --import` before the official conformance suites on Node < 22. The suites
// import `fs.globSync` (added in Node 22) at load time, for their `tier-check` command only; the
// server scenarios never call it. This registers resolve hooks that hand the suites an `fs`
// whose globSync throws a clear error instead of the whole suite dying at import.
import { register } from 'node:module';

register('./resolve-hooks.mjs', import.meta.url);
