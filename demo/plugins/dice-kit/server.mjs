// The dice-kit plugin's server (stdio): one tool, `roll`, that rolls dice with node:crypto.
import { randomInt } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const server = new McpServer({ name: 'dice', version: '1.0.0' }, { instructions: 'Rolls dice.' });
server.registerTool(
  'roll',
  {
    description: 'Rolls `count` dice of `sides` sides and returns each result and the total',
    inputSchema: z.object({ count: z.number().int().min(1).max(100).default(1), sides: z.number().int().min(2).max(1000).default(6) }),
    annotations: { readOnlyHint: true },
  },
  ({ count, sides }) => {
    const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
    const total = rolls.reduce((a, b) => a + b, 0);
    return { content: [{ type: 'text', text: `${rolls.join(' + ')} = ${total}` }] };
  },
);
await server.connect(new StdioServerTransport());
