// Test child: prints "ready", then reads nothing from stdin until it gets SIGUSR2 (a pipe the
// gateway fills), then prints "reading", reads --expect=BYTES bytes and prints
// "done <bytes> <sha256 of them>".
import { createHash } from 'node:crypto';

const expected = Number(process.argv.find((a) => a.startsWith('--expect='))?.split('=')[1]);
const hash = createHash('sha256');
let received = 0;

process.stdin.pause();
process.on('SIGUSR2', () => {
  process.stdout.write('reading\n');
  process.stdin.on('data', (chunk) => {
    hash.update(chunk);
    received += chunk.length;
    if (received >= expected) process.stdout.write(`done ${received} ${hash.digest('hex')}\n`);
  });
  process.stdin.resume();
});
setInterval(() => {}, 60_000);
process.stdout.write('ready\n');
