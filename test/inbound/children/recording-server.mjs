/**
 * A tiny stdio MCP server (newline-delimited JSON-RPC, 2025-era handshake) that appends every
 * message it receives, verbatim, one JSON line each, to the file named by its only argument.
 * The fuzz tests read that file to prove that nothing a fuzzer sent reached an upstream.
 *
 *   node test/inbound/children/recording-server.mjs /tmp/record.ndjson
 *
 * Plain JavaScript on purpose: tsconfig compiles test/fixtures but not test/inbound, and this
 * child must run as-is. No dependencies, so it cannot mis-parse what it records.
 *
 * It serves one tool (`echo`), one prompt (`greeting`) and one resource (`rec://note`), so the
 * gateway's list fan-out and name routing have something to route to. Anything else with an id
 * gets -32601; notifications are recorded and otherwise ignored. Diagnostics go to stderr only.
 */
import { appendFileSync } from 'node:fs';

const recordFile = process.argv[2];
if (recordFile === undefined) {
  process.stderr.write('usage: recording-server.mjs <record-file>\n');
  process.exit(2);
}

const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'];

const TOOL = {
  name: 'echo',
  description: 'Echoes its text argument.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};
const PROMPT = { name: 'greeting', description: 'A fixed greeting.' };
const RESOURCE = { uri: 'rec://note', name: 'note', mimeType: 'text/plain' };

/** The result for a request, or an error `{ code, message }` under the key `error`. */
function answer(method, params) {
  switch (method) {
    case 'initialize': {
      const asked = params?.protocolVersion;
      return {
        result: {
          protocolVersion: SUPPORTED.includes(asked) ? asked : SUPPORTED[0],
          capabilities: { tools: {}, prompts: {}, resources: {} },
          serverInfo: { name: 'recording-server', version: '1.0.0' },
        },
      };
    }
    case 'ping':
      return { result: {} };
    case 'tools/list':
      return { result: { tools: [TOOL] } };
    case 'prompts/list':
      return { result: { prompts: [PROMPT] } };
    case 'resources/list':
      return { result: { resources: [RESOURCE] } };
    case 'resources/templates/list':
      return { result: { resourceTemplates: [] } };
    case 'tools/call': {
      if (params?.name !== 'echo') return { error: { code: -32602, message: 'unknown tool' } };
      const text = typeof params.arguments?.text === 'string' ? params.arguments.text : '';
      return { result: { content: [{ type: 'text', text }] } };
    }
    case 'prompts/get':
      return { result: { messages: [{ role: 'user', content: { type: 'text', text: 'hello' } }] } };
    case 'resources/read':
      return { result: { contents: [{ uri: RESOURCE.uri, mimeType: 'text/plain', text: 'a note' }] } };
    default:
      return { error: { code: -32601, message: 'Method not found' } };
  }
}

function handleLine(line) {
  if (line.trim() === '') return;
  appendFileSync(recordFile, `${line.trim()}\n`);
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    process.stderr.write('[recording-server] unparseable line\n');
    return;
  }
  if (typeof message !== 'object' || message === null || typeof message.method !== 'string') return;
  if (message.id === undefined) return; // a notification
  const reply = answer(message.method, message.params);
  process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: message.id, ...reply })}\n`);
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let newline = buffered.indexOf('\n');
  while (newline !== -1) {
    handleLine(buffered.slice(0, newline));
    buffered = buffered.slice(newline + 1);
    newline = buffered.indexOf('\n');
  }
});
process.stdin.on('end', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));
