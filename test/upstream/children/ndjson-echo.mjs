// Test child: an ndjson JSON-RPC echo server with switches for misbehaviour.
// Flags: --banner (a non-JSON line on stdout first), --ignore-sigterm (survives SIGTERM and stdin
// EOF), --startup-delay=MS (reads nothing for MS ms, like a slow `npx`), --stderr-secret (writes
// ECHO_SECRET's value to stderr). Like the SDK's own reader, it skips lines it cannot parse.
import { spawn } from 'node:child_process';

const flags = new Set(process.argv.slice(2));
const delayFlag = process.argv.find((a) => a.startsWith('--startup-delay='));
const startupDelay = delayFlag ? Number(delayFlag.split('=')[1]) : 0;
let requests = 0;
let skipped = 0;

const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const reply = (id, result) => write({ jsonrpc: '2.0', id, result });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

if (flags.has('--banner')) process.stdout.write('echo server 1.0 starting up, hello!\n');
if (flags.has('--stderr-secret')) process.stderr.write(`using token=${process.env.ECHO_SECRET}\nready\n`);
if (flags.has('--ignore-sigterm')) {
  process.on('SIGTERM', () => {});
  setInterval(() => {}, 60_000);
}

async function handle(message) {
  if (message.method === undefined || message.id === undefined) return;
  requests++;
  const { id, method, params = {} } = message;
  switch (method) {
    case 'test/crash':
      process.exit(params.code ?? 3);
      break;
    case 'test/big':
      reply(id, { pad: 'x'.repeat(params.bytes) });
      break;
    case 'test/split': {
      const text = Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, result: { text: params.text } })}\n`);
      for (let i = 0; i < text.length; i += params.chunk) {
        process.stdout.write(text.subarray(i, i + params.chunk));
        await sleep(1);
      }
      break;
    }
    case 'test/garbage':
      process.stdout.write('{"token": "garbage-secret-123", oops\n');
      process.stdout.write('{"not":"json-rpc","token":"garbage-secret-123"}\n');
      reply(id, { ok: true });
      break;
    case 'test/grandchild': {
      const grandchild = spawn('sleep', ['60'], { stdio: 'ignore' });
      reply(id, { pid: grandchild.pid });
      break;
    }
    case 'test/env':
      reply(id, { names: Object.keys(process.env).sort() });
      break;
    case 'test/stats':
      reply(id, { requests, skipped });
      break;
    default:
      reply(id, { method, params });
  }
}

function listen() {
  let buffered = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    let newline;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        skipped++;
        continue;
      }
      void handle(message);
    }
  });
}

if (startupDelay > 0) setTimeout(listen, startupDelay);
else listen();
