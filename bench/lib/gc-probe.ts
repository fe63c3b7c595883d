/**
 * Preload for a measured process (`node --expose-gc --import <this file> …`): on SIGUSR2 it runs
 * two full garbage collections and writes one line `GC_PROBE {"rss":…,"heapUsed":…,…}` to
 * stderr. Memory per idle session is then what the sessions retain, not the garbage their
 * handshakes left behind (an RSS delta alone mixes both).
 */
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  process.stderr.write(`GC_PROBE ${JSON.stringify({ rss, heapUsed, heapTotal, external, arrayBuffers, gc: gc !== undefined })}\n`);
});
