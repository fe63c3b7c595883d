/**
 * Measures the "Resource subscriptions of 2026 clients" rows of docs/compatibility.md: for each
 * isolation, starts the built gateway fronting `@modelcontextprotocol/server-everything` over
 * stdio, connects the SDK v2 client in `auto` mode (2026-07-28), opens `subscriptions/listen`
 * naming one resource, turns on server-everything's simulated updates (`toggle-subscriber-updates`,
 * every 5 s, per connection) and counts the `notifications/resources/updated` that arrive within
 * 12 s. Prints one JSON line per isolation.
 *
 *   npm run build && node dist/bench/compat/listen-resources.js
 *
 * Not part of `npm test`: it measures, it does not assert.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { compatConfig, startGatewayProcess } from './gateway-process.js';

const URI = 'demo://resource/static/document/architecture.md';
const WINDOW_MS = 12_000;

async function measure(isolation: string): Promise<Record<string, unknown>> {
  const gateway = await startGatewayProcess(compatConfig({ isolation }));
  const client = new Client({ name: 'compat-listen', version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url)));
    let updates = 0;
    client.setNotificationHandler('notifications/resources/updated', (notification) => {
      if (notification.params.uri === URI) updates += 1;
    });
    const subscription = await client.listen({ resourceSubscriptions: [URI] });
    await client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    const deadline = Date.now() + WINDOW_MS;
    while (updates === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    await subscription.close();
    return { isolation, acknowledged: subscription.honoredFilter, updatesWithin12s: updates };
  } finally {
    await client.close().catch(() => undefined);
    await gateway.stop();
  }
}

for (const isolation of ['session', 'principal']) {
  process.stdout.write(`${JSON.stringify(await measure(isolation))}\n`);
}
