/** Which endpoint an edge refusal's audit line names: only configured side channels, never a made-up path. */
import { describe, expect, it } from 'vitest';
import { endpointOfPath } from '../../src/inbound/audit-refusals.js';

const sides = new Set(['docs']);
const agents = new Set(['reviewer']);

describe('endpointOfPath', () => {
  it.each([
    ['/mcp', '/mcp', { endpoint: 'aggregate' }],
    ['/mcp/sse', '/mcp', { endpoint: 'aggregate' }],
    ['/mcp/messages', '/mcp', { endpoint: 'aggregate' }],
    ['/mcp/servers/docs', '/mcp', { endpoint: 'server:docs', server: 'docs' }],
    ['/mcp/servers/docs/sse', '/mcp', { endpoint: 'server:docs', server: 'docs' }],
    ['/mcp/servers/evil', '/mcp', { endpoint: 'gateway' }],
    ['/metrics', '/mcp', { endpoint: 'gateway' }],
    ['/mcpx', '/mcp', { endpoint: 'gateway' }],
    ['/', '', { endpoint: 'aggregate' }],
    ['/servers/docs', '', { endpoint: 'server:docs', server: 'docs' }],
    ['/mcp/agents/reviewer', '/mcp', { endpoint: 'agent:reviewer' }],
    ['/mcp/agents/impostor', '/mcp', { endpoint: 'gateway' }],
    ['/agents/reviewer', '', { endpoint: 'agent:reviewer' }],
  ])('%s (base %s) → %o', (path, base, expected) => {
    expect(endpointOfPath(path, base, sides, (name) => agents.has(name))).toEqual(expected);
  });
});
