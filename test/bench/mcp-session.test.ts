/**
 * The bench's bare MCP client (bench/lib/mcp-session.ts) against a real gateway in this process
 * on 127.0.0.1, fronting the stdio fixture: the 2026-07-28 client's probe, call and the exact
 * request the load phase sends (body from `echoCallBody`, headers from `requestHeaders`) are
 * answered as a conformant 2026 client expects, and so are the 2025-era session's. A bench whose
 * client a gateway refused would measure refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoCallBody, openSession, requestHeaders, rpc } from '../../bench/lib/mcp-session.js';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { silentLogger } from '../../src/observability/logger.js';
import { assertBuilt, newMarker } from '../integration/harness/paths.js';
import { stdioServer } from '../integration/harness/upstreams.js';

let gateway: RunningGateway;

beforeAll(async () => {
  assertBuilt();
  const config = parseConfig({ listen: { host: '127.0.0.1', port: 0 }, servers: { fx: stdioServer(newMarker()) } });
  gateway = await startGateway({ config, logger: silentLogger(), env: process.env });
});

afterAll(async () => {
  await gateway?.close();
});

describe('the bench client', () => {
  it('probes with server/discover and calls as a 2026-07-28 client, with no session', async () => {
    const client = await openSession(gateway.url, undefined, '2026');
    expect(client.sessionId).toBeUndefined();
    const result = await rpc(client, 'tools/call', { name: 'fx__echo', arguments: { text: 'bench' } });
    expect(result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'bench' }] });
  });

  it('sends the load phase’s 2026 request as the gateway accepts it: envelope in the body, Mcp-Method and Mcp-Name in the headers', async () => {
    const client = await openSession(gateway.url, undefined, '2026');
    const headers = requestHeaders(client, 'tools/call', { name: 'fx__echo' });
    expect(headers).toMatchObject({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx__echo' });
    const response = await fetch(gateway.url, { method: 'POST', headers, body: echoCallBody('fx__echo', '2026').replace('"[<id>]"', '"load-1"') });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 'load-1', result: { content: [{ type: 'text', text: 'hello' }] } });
  });

  it('still opens a 2025-era session whose load request is answered', async () => {
    const session = await openSession(gateway.url);
    expect(session.era).toBe('2025');
    expect(session.sessionId).toEqual(expect.any(String));
    const response = await fetch(gateway.url, {
      method: 'POST',
      headers: requestHeaders(session, 'tools/call', { name: 'fx__echo' }),
      body: echoCallBody('fx__echo').replace('"[<id>]"', '"load-2"'),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: 'load-2', result: { content: [{ type: 'text', text: 'hello' }] } });
  });
});
