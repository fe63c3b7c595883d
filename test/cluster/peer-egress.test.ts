/**
 * Forwarding to the replica that owns a session obeys the egress rules. The owner's URL comes
 * from Redis, so whoever can write there could name any host: the URL is judged by the policy's
 * rules for `cluster.advertiseUrl` before anything is sent (the request carries the client's
 * session and the cluster secret), and the dial goes through the egress guard. A real HTTP server
 * on 127.0.0.1 plays the peer and counts the connections it gets.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forwardRequest } from '../../src/cluster/forward.js';
import { peerForwarding } from '../../src/cluster/peer-forwarding.js';
import { clusterPeerTarget } from '../../src/config/egress-targets.js';
import { compileEgressCheck } from '../../src/policy/egress-target.js';
import { parsePolicy } from '../../src/policy/policy-load.js';
import { compilePolicyRules } from '../../src/policy/policy-rules.js';
import { tripwireEachTest } from '../net/tripwire.js';
import { capturingLogger } from '../session/redis-helpers.js';

let peer: Server;
let port = 0;
let connections = 0;

beforeAll(async () => {
  peer = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"result":{}}'));
  peer.on('connection', () => (connections += 1));
  peer.listen(0, '127.0.0.1');
  await once(peer, 'listening');
  port = (peer.address() as AddressInfo).port;
});
afterAll(async () => {
  peer.closeAllConnections();
  await new Promise<void>((resolve) => peer.close(() => resolve()));
});
beforeEach(() => (connections = 0));
// Nothing but 127.0.0.1 may be dialled, whatever a refusal under test does wrong.
tripwireEachTest([]);

function forwarding(policy: unknown, allowPrivateNetwork: boolean) {
  const parsed = parsePolicy(policy);
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const { logger, lines } = capturingLogger();
  const cluster = { allowPrivateNetwork };
  const options = peerForwarding('replica-a', {
    secret: 'cluster-s3cr3t',
    logger,
    peers: { allowPrivateNetwork, allowed: compileEgressCheck(compilePolicyRules(parsed.policy), (url) => clusterPeerTarget(cluster, url)) },
  });
  return { options, lines };
}

const request = () =>
  new Request('http://127.0.0.1:1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', 'mcp-session-id': 'sid-s3cr3t' }, body: '{}' });

describe('forwarding a request to the owning replica', () => {
  it('reaches a loopback peer when cluster.allowPrivateNetwork is set', async () => {
    const { options } = forwarding({}, true);
    const answer = await forwardRequest(request(), { jsonrpc: '2.0', id: 1, method: 'ping' }, `http://127.0.0.1:${port}`, options);
    expect(answer.status).toBe(200);
    expect(connections).toBe(1);
    await options.close();
  });

  it('never connects to a loopback peer without cluster.allowPrivateNetwork', async () => {
    const { options, lines } = forwarding({}, false);
    const answer = await forwardRequest(request(), {}, `http://127.0.0.1:${port}`, options);
    expect(answer.status).toBe(502);
    expect(connections).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, server: 'cluster.advertiseUrl', code: 'UPSTREAM_BLOCKED', range: 'loopback' }));
    await options.close();
  });

  it('sends nothing to a peer URL the policy does not allow, naming the field and never the URL', async () => {
    const { options, lines } = forwarding({ infrastructureHosts: ['replicas.internal'] }, true);
    const answer = await forwardRequest(request(), {}, `http://127.0.0.1:${port}`, options);
    expect(answer.status).toBe(502);
    expect(connections).toBe(0);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, field: 'cluster.advertiseUrl', reason: "cluster.advertiseUrl: host is not in the policy's infrastructureHosts" }));
    expect(JSON.stringify(lines)).not.toContain(String(port));
    expect(JSON.stringify(lines)).not.toContain('s3cr3t');
    await options.close();
  });

  it('refuses a plaintext peer URL beyond loopback when cluster.allowPrivateNetwork is not set', async () => {
    const { options } = forwarding({}, false);
    const answer = await forwardRequest(request(), {}, 'http://169.254.169.254:8787', options);
    expect(answer.status).toBe(502);
    await options.close();
  });
});
