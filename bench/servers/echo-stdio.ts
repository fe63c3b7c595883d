/**
 * Echo upstream over stdio (newline-delimited JSON, both protocol eras via `serveStdio`).
 *
 *   node dist/bench/servers/echo-stdio.js
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { createEchoServer } from './echo-tool.js';

const handle = serveStdio(() => createEchoServer(), {
  onerror: (error) => process.stderr.write(`[echo-stdio] ${error.message}\n`),
});
const shutdown = (): void => {
  void handle.close().finally(() => process.exit(0));
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
// The parent closing our stdin is the normal end of a stdio server's life.
process.stdin.once('end', shutdown);
