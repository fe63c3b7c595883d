/**
 * The benchmark's upstream: an SDK v2 `McpServer` with one tool, `echo`, that returns its input.
 * Kept trivial on purpose, so every path measures transport and proxy cost, not tool work.
 */
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/** Builds one echo server instance (per 2025-era session, per 2026-era request, or per stdio connection). */
export function createEchoServer(): McpServer {
  const server = new McpServer({ name: 'echo', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'echo',
    {
      description: 'Returns its input text unchanged',
      inputSchema: z.object({ text: z.string() }),
      annotations: { readOnlyHint: true },
    },
    ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  return server;
}
