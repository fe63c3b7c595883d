// Test child for the resumability chaos tests: an MCP server (SDK v2) over stdio with one tool,
// `emit`, that sends `count` logging notifications numbered 1…count and tagged with `label`, in
// bursts of `burst` with a `pauseMs` pause after each burst (so the emission lasts long enough
// for connections to be cut while it is live), then returns "emitted <count>".
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const server = new McpServer({ name: 'numbered-emitter', version: '1.0.0' }, { capabilities: { logging: {} } });
server.registerTool(
  'emit',
  {
    description: 'Sends `count` numbered logging notifications tagged with `label`, then returns',
    inputSchema: z.object({
      label: z.string().max(32),
      count: z.number().int().min(1).max(20_000),
      burst: z.number().int().min(1).max(20_000).default(50),
      pauseMs: z.number().int().min(0).max(1_000).default(0),
    }),
  },
  async ({ label, count, burst, pauseMs }, ctx) => {
    for (let seq = 1; seq <= count; seq += 1) {
      await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', logger: 'numbered-emitter', data: { label, seq } } });
      if (seq % burst === 0 && pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return { content: [{ type: 'text', text: `emitted ${count}` }] };
  },
);
await server.connect(new StdioServerTransport());
