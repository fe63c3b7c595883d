/**
 * The shared harness of the gateway integration suite, one module per idea under `harness/`:
 * - `wait`: cleanup stacks and bounded waits (hang guards, never speed assertions);
 * - `paths`: the compiled fixture and CLI (`npx tsc -p tsconfig.json` first);
 * - `processes`: /proc bookkeeping to prove no child is left (descendants, env markers);
 * - `upstreams`: the fixture over stdio and HTTP, a stdin recorder and a recording proxy;
 * - `clients`: an in-process gateway on 127.0.0.1:0 and SDK v2 clients of both eras;
 * - `raw-http`: node:http requests and hand-driven 2025 sessions;
 * - `cli`: the `portcullis` executable as a child process;
 * - `principals`: bearer principals and a gateway that authenticates them;
 * - `catalogue-upstream`: the search benchmark's ~5,000 tools as real HTTP upstreams;
 * - `rug-pull`: the fixture that rewrites its tools, and the tool-integrity approvals API.
 */
export * from './harness/wait.js';
export * from './harness/paths.js';
export * from './harness/processes.js';
export * from './harness/upstreams.js';
export * from './harness/clients.js';
export * from './harness/raw-http.js';
export * from './harness/cli.js';
export * from './harness/gateway-scope.js';
export * from './harness/principals.js';
export * from './harness/catalogue-upstream.js';
export * from './harness/rug-pull.js';
