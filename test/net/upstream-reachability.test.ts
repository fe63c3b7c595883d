/**
 * `portcullis check`'s preview of egress refusals: the same decision the guard makes when it
 * dials. DNS names are judged through an injected resolver only; a tripwire proves no lookup or
 * connection leaves the process.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { ResolvedAddress } from '../../src/net/connect-decision.js';
import { blockedUpstreamWarnings } from '../../src/net/upstream-reachability.js';
import { installTripwire, type Tripwire } from './tripwire.js';

let wire: Tripwire;
beforeEach(() => {
  wire = installTripwire();
});
afterEach(() => {
  wire.restore();
  expect(wire.violations).toEqual([]);
});

const http = (url: string, extra: Record<string, unknown> = {}) => ({ transport: 'streamableHttp', url, ...extra });
const resolver = (answers: Record<string, ResolvedAddress[]>) => {
  const asked: string[] = [];
  const resolve = async (hostname: string) => {
    asked.push(hostname);
    const found = answers[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { resolve, asked };
};

describe('blockedUpstreamWarnings', () => {
  it('warns about literal loopback, private and link-local URLs and localhost names without resolving anything', async () => {
    const config = parseConfig({
      servers: {
        loop: http('https://127.0.0.1:8443/mcp'),
        ten: http('https://10.1.2.3/mcp'),
        meta: http('https://[::ffff:169.254.169.254]/mcp'),
        local: http('https://localhost/mcp'),
        public: http('https://93.184.216.34/mcp'),
        named: http('https://mcp.internal.example/mcp'),
        tool: { transport: 'stdio', command: 'node' },
      },
    });
    const warnings = await blockedUpstreamWarnings(config);
    expect(warnings).toHaveLength(4);
    expect(warnings).toContain(
      'servers.loop.url: will be blocked: its URL resolves to a loopback address, and the egress guard refuses loopback and private addresses; set "allowPrivateNetwork": true on servers.loop if that is intended',
    );
    expect(warnings.find((w) => w.startsWith('servers.ten.url:'))).toContain('resolves to a private address');
    expect(warnings.find((w) => w.startsWith('servers.meta.url:'))).toMatch(/will be blocked: its URL resolves to an? \S+ address/);
    expect(warnings.find((w) => w.startsWith('servers.local.url:'))).toContain('its URL names localhost');
  });

  it('resolves DNS names through the given resolver and warns when any answer is private', async () => {
    const config = parseConfig({
      servers: {
        sneaky: http('https://rebind.example/mcp'),
        fine: http('https://public.example/mcp'),
        gone: http('https://missing.example/mcp'),
      },
    });
    const { resolve, asked } = resolver({
      'rebind.example': [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.5', family: 4 },
      ],
      'public.example': [{ address: '93.184.216.34', family: 4 }],
    });
    const warnings = await blockedUpstreamWarnings(config, { resolve });
    expect(asked.sort()).toEqual(['missing.example', 'public.example', 'rebind.example']);
    expect(warnings).toHaveLength(2);
    expect(warnings.find((w) => w.startsWith('servers.sneaky.url:'))).toContain('will be blocked: its URL resolves to a private address');
    expect(warnings.find((w) => w.startsWith('servers.gone.url:'))).toBe('servers.gone.url: name resolution failed (ENOTFOUND)');
    expect(warnings.join('\n')).not.toContain('.example');
  });

  it('says nothing about a server that opts into the private network', async () => {
    const config = parseConfig({ servers: { dev: http('https://127.0.0.1:8443/mcp', { allowPrivateNetwork: true }) } });
    expect(await blockedUpstreamWarnings(config)).toEqual([]);
  });
});
