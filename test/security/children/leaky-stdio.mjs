// A careless stdio MCP server: it prints its API_TOKEN to stderr and to stdout (as non-JSON
// noise before the protocol starts), then serves the conformance fixture over stdio.
//   node leaky-stdio.mjs            prints the whole secret
//   node leaky-stdio.mjs --cut      pads the lines so the gateway's stderr line limit (8 KiB) and
//                                   its stdout noise preview (256 bytes) cut the secret in half
// Plain JS (not compiled): run it straight from test/security/children/ after `npx tsc -p tsconfig.json`.
const secret = process.env.API_TOKEN ?? '';
const cut = process.argv.includes('--cut');
if (cut) {
  process.stderr.write(`${'e'.repeat(8 * 1024 - 20)}${secret}\n`);
  process.stdout.write(`${'o'.repeat(256 - 20)}${secret}\n`);
} else {
  process.stderr.write(`leaky: starting with API_TOKEN=${secret}\n`);
  process.stdout.write(`leaky: API_TOKEN=${secret}\n`);
}
// The fixture parses argv[2..] and wants exactly `--stdio`.
process.argv.splice(2, process.argv.length - 2, '--stdio');
await import(new URL('../../../dist/test/fixtures/conformance-server.js', import.meta.url).href);
