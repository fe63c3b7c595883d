// Test child: a Content-Length-framed JSON-RPC echo server. It discards any header block without a
// Content-Length (so an ndjson line sent to it is ignored, as LSP-style servers do).
// Flags: --hello (writes a notification before reading anything), --chunk=N (writes its output in
// N-byte pieces, a millisecond apart).
const flags = new Set(process.argv.slice(2));
const chunkFlag = process.argv.find((a) => a.startsWith('--chunk='));
const chunkSize = chunkFlag ? Number(chunkFlag.split('=')[1]) : 0;
let requests = 0;
let output = Promise.resolve();

function write(message) {
  const body = Buffer.from(JSON.stringify(message));
  const frame = Buffer.concat([
    Buffer.from(`Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: ${body.length}\r\n\r\n`),
    body,
  ]);
  output = output.then(async () => {
    if (chunkSize <= 0) return void process.stdout.write(frame);
    for (let i = 0; i < frame.length; i += chunkSize) {
      process.stdout.write(frame.subarray(i, i + chunkSize));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  });
}

if (flags.has('--hello')) write({ jsonrpc: '2.0', method: 'test/hello', params: {} });

let buffer = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n');
    if (end === -1) return;
    const match = /content-length:\s*(\d+)/i.exec(buffer.subarray(0, end).toString('latin1'));
    if (match === null) {
      buffer = buffer.subarray(end + 4);
      continue;
    }
    const length = Number(match[1]);
    if (buffer.length < end + 4 + length) return;
    const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    buffer = buffer.subarray(end + 4 + length);
    const message = JSON.parse(body);
    if (message.id === undefined || message.method === undefined) continue;
    requests++;
    const result = message.method === 'test/stats' ? { requests } : { method: message.method, params: message.params ?? {} };
    write({ jsonrpc: '2.0', id: message.id, result });
  }
});
