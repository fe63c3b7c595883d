/**
 * A byte passthrough on 127.0.0.1: every request relayed as it is (method, path, headers, body)
 * to one upstream over keep-alive connections, and the answer relayed back the same way. It
 * understands nothing of MCP; the bench uses it as the floor of what any HTTP hop in front of the
 * echo costs.
 *
 *   node dist/bench/servers/passthrough.js --port N --upstream http://127.0.0.1:P/mcp
 *   prints `PASSTHROUGH_READY http://127.0.0.1:PORT/mcp`
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { port: { type: 'string', default: '0' }, upstream: { type: 'string' } } });
const upstream = new URL(values.upstream ?? '');
if (upstream.protocol !== 'http:' || upstream.hostname !== '127.0.0.1') throw new TypeError('--upstream must be an http://127.0.0.1 URL');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

const server = createServer((req, res) => {
  const out = request({ host: '127.0.0.1', port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  out.on('error', () => res.destroy());
  req.pipe(out);
});
server.listen(Number(values.port), '127.0.0.1', () => {
  process.stdout.write(`PASSTHROUGH_READY http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}\n`);
});
