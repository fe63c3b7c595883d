// Drives the TS SDK 1.x client through the gateway: Streamable HTTP, HTTP+SSE, and mcp-remote (stdio bridge).
// Usage: node bench/compat/clients/ts-clients.mjs [GATEWAY_MCP_URL]  (MCP_REMOTE_JS: path of mcp-remote's dist/proxy.js)
const SDK = new URL('../../../node_modules/@modelcontextprotocol/sdk/dist/esm', import.meta.url).href;
const MCP_REMOTE = process.env.MCP_REMOTE_JS ?? '/tmp/matrix/node_modules/mcp-remote/dist/proxy.js';
const { Client } = await import(`${SDK}/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${SDK}/client/streamableHttp.js`);
const { SSEClientTransport } = await import(`${SDK}/client/sse.js`);
const { StdioClientTransport } = await import(`${SDK}/client/stdio.js`);
const T = await import(`${SDK}/types.js`);
const URL_ = process.argv[2] ?? 'http://127.0.0.1:18931/mcp';

async function checks(client) {
  const r = {};
  const step = async (name, fn) => { try { r[name] = 'ok: ' + (await fn()); } catch (e) { r[name] = `error ${e.code ?? ''}: ${String(e.message).slice(0, 100)}`; } };
  await step('initialize', async () => `${client.getServerVersion()?.name} protocol`);
  await step('tools/list', async () => `${(await client.listTools()).tools.length} tools`);
  await step('tools/call get-sum', async () => (await client.callTool({ name: 'everything__get-sum', arguments: { a: 2, b: 3 } })).content[0].text);
  await step('tools/list after first call', async () => `${(await client.listTools()).tools.length} tools`);
  await step('progress (trigger-long-running-operation)', async () => { const seen = []; await client.callTool({ name: 'everything__trigger-long-running-operation', arguments: { duration: 1, steps: 2 } }, undefined, { onprogress: (p) => seen.push(p.progress) }); return `progress ${JSON.stringify(seen)}`; });
  await step('sampling (trigger-sampling-request)', async () => (await client.callTool({ name: 'everything__trigger-sampling-request', arguments: { prompt: 'hi', maxTokens: 5 } })).content[0].text.slice(0, 60));
  await step('elicitation (trigger-elicitation-request)', async () => (await client.callTool({ name: 'everything__trigger-elicitation-request', arguments: {} })).content[0].text.slice(0, 60));
  await step('roots (get-roots-list)', async () => (await client.callTool({ name: 'everything__get-roots-list', arguments: {} })).content[0].text.slice(0, 60));
  await step('task tool plain callTool', async () => JSON.stringify((await client.callTool({ name: 'everything__simulate-research-query', arguments: { topic: 'x' } })).content?.[0]).slice(0, 60));
  await step('resources/list', async () => `${(await client.listResources()).resources.length} resources`);
  await step('resources/templates/list', async () => `${(await client.listResourceTemplates()).resourceTemplates.length} templates`);
  await step('resources/read', async () => (await client.readResource({ uri: 'demo://resource/dynamic/text/1' })).contents[0].text.slice(0, 40));
  await step('resources/subscribe', async () => JSON.stringify(await client.subscribeResource({ uri: 'demo://resource/dynamic/text/1' })));
  await step('prompts/list', async () => `${(await client.listPrompts()).prompts.length} prompts`);
  await step('prompts/get', async () => (await client.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Paris' } })).messages[0].content.text.slice(0, 40));
  await step('completion/complete', async () => JSON.stringify((await client.complete({ ref: { type: 'ref/prompt', name: 'everything__completable-prompt' }, argument: { name: 'department', value: 'E' } })).completion.values));
  await step('logging/setLevel', async () => JSON.stringify(await client.setLoggingLevel('debug')));
  await step('ping', async () => JSON.stringify(await client.ping()));
  return r;
}

function newClient() {
  const client = new Client({ name: 'ts-sdk-1x', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } } });
  client.setRequestHandler(T.CreateMessageRequestSchema, () => ({ model: 'm', role: 'assistant', content: { type: 'text', text: 'sampled' } }));
  client.setRequestHandler(T.ElicitRequestSchema, () => ({ action: 'decline' }));
  client.setRequestHandler(T.ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///tmp', name: 'tmp' }] }));
  return client;
}

const results = {};
for (const [label, make] of [
  ['TS SDK 1.x Streamable HTTP', () => new StreamableHTTPClientTransport(new URL(URL_))],
  ['TS SDK 1.x HTTP+SSE', () => new SSEClientTransport(new URL(`${URL_}/sse`))],
  ['mcp-remote (stdio bridge, SDK 1.x stdio client)', () => new StdioClientTransport({ command: process.execPath, args: [MCP_REMOTE, URL_, '--allow-http', '--transport', 'http-only'], stderr: 'ignore' })],
  ['mcp-remote --transport sse-only', () => new StdioClientTransport({ command: process.execPath, args: [MCP_REMOTE, `${URL_}/sse`, '--allow-http', '--transport', 'sse-only'], stderr: 'ignore' })],
]) {
  const client = newClient();
  const transport = make();
  try {
    await Promise.race([client.connect(transport), new Promise((_, rej) => setTimeout(() => rej(new Error('connect timeout')), 30000))]);
    results[label] = await checks(client);
    results[label].protocol = transport._protocolVersion ?? transport.protocolVersion ?? '';
  } catch (e) { results[label] = { connect: `error: ${e.message}` }; }
  try { await transport.terminateSession?.(); } catch {}
  await client.close().catch(() => {});
}
console.log(JSON.stringify(results, null, 1));
