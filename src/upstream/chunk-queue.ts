/** Byte buffering shared by the stdio decoders and the stderr line splitter. */

/** A list of chunks taken as one buffer at the end: linear in total size, one copy. */
export class ChunkQueue {
  private chunks: Buffer[] = [];
  bytes = 0;

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
  }

  /** Everything queued followed by `tail`, as one buffer; empties the queue. */
  take(tail?: Buffer): Buffer {
    const parts = tail === undefined || tail.length === 0 ? this.chunks : [...this.chunks, tail];
    const out = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    this.clear();
    return out;
  }

  clear(): void {
    this.chunks = [];
    this.bytes = 0;
  }
}

/** A Uint8Array as a Buffer over the same memory (no copy). */
export function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}
