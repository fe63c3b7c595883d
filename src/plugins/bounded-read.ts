/**
 * Reading a plugin file with a byte cap: a plugin is the least trusted layer, and a manifest or
 * agent file of gigabytes (or a FIFO that never ends) must cost a bounded read, not the process.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';

export type BoundedRead =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly reason: 'missing' | 'not-a-file' | 'too-large' | 'unreadable' };

/** Reads a regular file as UTF-8 (a leading BOM dropped) if it holds at most `maxBytes` bytes. */
export async function readBoundedText(file: string, maxBytes: number): Promise<BoundedRead> {
  let handle;
  try {
    // Non-blocking so that a FIFO planted as a manifest is refused instead of waited on.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { ok: false, reason: (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable' };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, reason: 'not-a-file' };
    if (stat.size > maxBytes) return { ok: false, reason: 'too-large' };
    // The size may change between stat and read: read one byte past the cap to notice.
    const buffer = Buffer.alloc(maxBytes + 1);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled > maxBytes) return { ok: false, reason: 'too-large' };
    }
    const text = buffer.subarray(0, filled).toString('utf8');
    return { ok: true, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
  } catch {
    return { ok: false, reason: 'unreadable' };
  } finally {
    await handle.close();
  }
}

/** The phrase for a failed read in a diagnostic. */
export function describeReadFailure(reason: Exclude<BoundedRead, { ok: true }>['reason'], maxBytes: number): string {
  switch (reason) {
    case 'missing':
      return 'file not found';
    case 'not-a-file':
      return 'is not a regular file';
    case 'too-large':
      return `is larger than ${maxBytes} bytes`;
    case 'unreadable':
      return 'cannot be read';
  }
}
