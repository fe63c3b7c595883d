/**
 * Regenerates the "server-everything × era" table of docs/compatibility.md: starts the built
 * gateway as a child process fronting `@modelcontextprotocol/server-everything` over stdio,
 * connects one SDK v2 client per era (2025: `initialize` + session; 2026: `auto`, which
 * negotiates 2026-07-28), lists the tools and calls every one, and prints a Markdown table.
 *
 * The client declares sampling, elicitation (form and url) and roots and answers them, so the
 * tools that ask the client something can complete. A tool that requires a task is called as a
 * task in the 2025 era (`tasks/result` gives its report); in the 2026 era it is called as a plain
 * call without the tasks extension, which the gateway must refuse.
 *
 *   npm run build && node dist/bench/compat/everything-eras.js [--isolation principal]
 *
 * Not part of `npm test`: it measures, it does not assert.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { passThroughResult } from '../../demo/lib/pass-through-result.js';
import { compatConfig, startGatewayProcess } from './gateway-process.js';

type Json = Record<string, unknown>;
type Era = '2025' | '2026';
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const TASK_REQUIRED = new Set<string>();
const CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } };

/** Arguments for tools whose schema a generic filler would not satisfy meaningfully. */
const ARGUMENTS: Record<string, Json> = {
  echo: { message: 'compat' },
  'get-sum': { a: 2, b: 3 },
  'get-annotated-message': { messageType: 'success', includeImage: false },
  'get-resource-links': { count: 2 },
  'get-resource-reference': { resourceType: 'Text', resourceId: 1 },
  'trigger-long-running-operation': { duration: 2, steps: 2 },
  'trigger-sampling-request': { prompt: 'say hi', maxTokens: 10 },
  'simulate-research-query': { topic: 'compat' },
  'gzip-file-as-resource': { name: 'compat.gz', data: 'data:text/plain;base64,aGVsbG8=' },
  'trigger-url-elicitation': { url: 'https://example.com/consent', message: 'open this' },
};

interface Property {
  type?: string | string[];
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
}

/** A value for each required property: its default, its first enum value, or a sample of its type. */
export function fillArguments(schema: { properties?: Record<string, Property>; required?: string[] } | undefined): Json {
  const out: Json = {};
  for (const key of schema?.required ?? []) {
    const prop = schema?.properties?.[key] ?? {};
    const type = Array.isArray(prop.type) ? prop.type[0] : prop.type;
    if (prop.default !== undefined) out[key] = prop.default;
    else if (prop.enum?.length) out[key] = prop.enum[0];
    else if (type === 'number' || type === 'integer') out[key] = prop.minimum ?? 1;
    else if (type === 'boolean') out[key] = true;
    else if (type === 'object') out[key] = {};
    else if (type === 'array') out[key] = [];
    else out[key] = 'compat';
  }
  return out;
}

function rpc(client: Client, method: string, params: Json, timeout = 30_000): Promise<Json> {
  return client.request({ method, params } as never, passThroughResult as never, { timeout } as never) as Promise<Json>;
}

function summarise(result: Json): string {
  if (result.isError === true) return `isError: ${firstText(result).slice(0, 80)}`;
  const content = (result.content as Array<{ type: string }> | undefined) ?? [];
  const kinds = [...new Set(content.map((c) => c.type))].join('+') || 'no content';
  return `${content.length} block(s) ${kinds}${result.structuredContent === undefined ? '' : ', structuredContent'}`;
}

function firstText(result: Json): string {
  const first = (result.content as Array<{ text?: string }> | undefined)?.[0];
  return (first?.text ?? '').replace(/\s+/g, ' ');
}

async function connect(url: string, era: Era): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client(
    { name: `compat-${era}`, version: '1.0.0' },
    {
      capabilities: CAPABILITIES,
      ...(era === '2026' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
    },
  );
  client.setRequestHandler('sampling/createMessage', () => ({ model: 'compat', role: 'assistant', content: { type: 'text', text: 'hi' } }));
  client.setRequestHandler('elicitation/create', () => ({ action: 'decline' }));
  client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///tmp', name: 'tmp' }] }));
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, transport };
}

/** One sessionless 2026-07-28 request over plain HTTP (the SDK 2.x client does not parse a `task` result). */
async function request2026(url: string, method: string, params: Json, capabilities: Json): Promise<Json> {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'compat-2026-raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  const bodies = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data:')).map((line) => line.slice(5).trim()).filter((d) => d !== '')
    : [text];
  for (const body of bodies) {
    const message = JSON.parse(body) as { id?: unknown; result?: Json; error?: { code: number; message: string } };
    if (message.id !== 1) continue;
    if (message.error !== undefined) throw Object.assign(new Error(message.error.message), { code: message.error.code });
    return message.result ?? {};
  }
  throw new Error(`no answer to ${method} (HTTP ${response.status})`);
}

/**
 * A 2026 call of a task-required tool by a client that declares the tasks extension
 * (`io.modelcontextprotocol/tasks`): the answer is a task, polled with `tasks/get` until terminal.
 */
async function callWithTasksExtension(url: string, name: string, args: Json): Promise<string> {
  const capabilities = { ...CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } };
  try {
    const created = await request2026(url, 'tools/call', { name, arguments: args }, capabilities);
    if (created.resultType !== 'task') return `with it: answered ${String(created.resultType)}, not a task`;
    const taskId = created.taskId as string;
    for (let polls = 0; polls < 150; polls += 1) {
      const task = await request2026(url, 'tasks/get', { taskId }, capabilities);
      if (task.status === 'completed') return `with it (raw HTTP): ok as a task, \`tasks/get\` inlines the result`;
      if (task.status === 'failed' || task.status === 'cancelled') return `with it: task ${String(task.status)}`;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return 'with it: task still running after 30 s';
  } catch (error) {
    const e = error as { code?: number; message?: string };
    return `with it: error ${e.code ?? ''}: ${(e.message ?? String(error)).slice(0, 80)}`;
  }
}

async function callOne(url: string, client: Client, era: Era, tool: Json): Promise<string> {
  const name = tool.name as string;
  const bare = name.replace(/^everything__/, '');
  const args = ARGUMENTS[bare] ?? fillArguments(tool.inputSchema as never);
  // 2026 lists carry no `execution.taskSupport` (the tasks extension says it per call), so the
  // 2025 listing, measured first, tells which tools require a task.
  if ((tool.execution as Json | undefined)?.taskSupport === 'required') TASK_REQUIRED.add(name);
  const taskRequired = TASK_REQUIRED.has(name);
  try {
    if (taskRequired && era === '2025') {
      const created = await rpc(client, 'tools/call', { name, arguments: args, task: { ttl: 60_000 } });
      const taskId = (created.task as Json).taskId as string;
      const result = await rpc(client, 'tasks/result', { taskId }, 60_000);
      return `ok (as a task): ${summarise(result)}`;
    }
    if (taskRequired && era === '2026') {
      const refused = await rpc(client, 'tools/call', { name, arguments: args }).then(
        () => 'answered without the tasks extension',
        (error: { code?: number }) => `refused ${error.code ?? '?'} without the tasks extension`,
      );
      return `${refused}; ${await callWithTasksExtension(url, name, args)}`;
    }
    const result = await rpc(client, 'tools/call', { name, arguments: args });
    return result.isError === true ? `tool error: ${firstText(result).slice(0, 100)}` : `ok: ${summarise(result)}`;
  } catch (error) {
    const e = error as { code?: number; message?: string };
    return `error${e.code === undefined ? '' : ` ${e.code}`}: ${(e.message ?? String(error)).replace(/\s+/g, ' ').slice(0, 120)}`;
  }
}

async function measure(url: string, era: Era): Promise<Map<string, string>> {
  const { client, transport } = await connect(url, era);
  const out = new Map<string, string>();
  try {
    // The first list comes before any call; a 2025 session's own upstream connection opens on
    // its first call (docs/architecture.md), and a server that tailors its tools to the client's
    // capabilities lists more from then on — so list, make one call, and list again.
    const first = ((await rpc(client, 'tools/list', {})) as { tools: Json[] }).tools;
    await rpc(client, 'tools/call', { name: 'everything__echo', arguments: { message: 'open' } });
    const { tools } = (await rpc(client, 'tools/list', {})) as { tools: Json[] };
    const before = new Set(first.map((t) => t.name as string));
    out.set('(negotiated)', client.getNegotiatedProtocolVersion?.() ?? '?');
    out.set('(tools listed before / after the first call)', `${first.length} / ${tools.length}`);
    for (const tool of tools) {
      const result = await callOne(url, client, era, tool);
      out.set(tool.name as string, before.has(tool.name as string) ? result : `${result} (listed after the first call)`);
    }
  } finally {
    if (transport.sessionId !== undefined) await transport.terminateSession().catch(() => undefined);
    await client.close().catch(() => undefined);
  }
  return out;
}

async function main(): Promise<void> {
  const isolationAt = process.argv.indexOf('--isolation');
  const isolation = isolationAt >= 0 ? process.argv[isolationAt + 1] : undefined;
  const gateway = await startGatewayProcess(compatConfig(isolation === undefined ? {} : { isolation }));
  try {
    const results = { '2025': await measure(gateway.url, '2025'), '2026': await measure(gateway.url, '2026') };
    const names = [...new Set([...results['2025'].keys(), ...results['2026'].keys()])];
    const cell = (s: string | undefined) => (s ?? 'not listed').replace(/\|/g, '\\|');
    console.log(`server-everything × era through the gateway (isolation: ${isolation ?? 'default'}), ${new Date().toISOString()}\n`);
    console.log('| tool | 2025 session (SDK 2.x, legacy) | 2026-07-28 (SDK 2.x, auto) |');
    console.log('| --- | --- | --- |');
    for (const name of names) console.log(`| \`${name}\` | ${cell(results['2025'].get(name))} | ${cell(results['2026'].get(name))} |`);
  } finally {
    await gateway.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
