/**
 * Hostnames are case-insensitive (RFC 9110 §7.2, RFC 4343): an allowed Host in capitals is served
 * like any other, over a real socket through @hono/node-server, and a Host not on the allowlist
 * is still refused in any case.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Cleanup, initializeBody, MCP_POST_HEADERS, rawRequest, startTestGateway } from './harness.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('the Host header, whatever its letter case', () => {
  it('serves LOCALHOST:port, Localhost and LocalHost. like localhost, and still refuses a host not allowed', async () => {
    const gateway = await startTestGateway(cleanup, {});
    const post = (host: string) => rawRequest(gateway.url, { headers: { ...MCP_POST_HEADERS, host }, body: initializeBody() });
    for (const host of [`LOCALHOST:${gateway.port}`, 'Localhost', `LocalHost.:${gateway.port}`, `localhost:${gateway.port}`]) {
      const answer = await post(host);
      expect(answer.status, host).toBe(200);
      expect(answer.json().result, host).toMatchObject({ serverInfo: { name: 'portcullis' } });
    }
    for (const host of [`EVIL.EXAMPLE:${gateway.port}`, 'Evil.Example']) {
      const answer = await post(host);
      expect(answer.status, host).toBe(403);
      expect(answer.json().error?.message).toMatch(/^Host header not allowed: "evil\.example" is not in the policy's allowedHosts/);
    }
  });
});
