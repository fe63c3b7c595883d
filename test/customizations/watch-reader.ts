/**
 * Reads a `GET <path>/customizations?watch=1` stream the way a host does: event by event, each a
 * whole list. Every read is bounded by a hang guard (never a speed assertion).
 */
import { within } from '../integration/harness/wait.js';

export interface WatchedList {
  items: Array<Record<string, unknown>>;
}

export interface WatchStream {
  readonly status: number;
  readonly contentType: string | null;
  /** The next `customizationsChanged` event's list (comments skipped). */
  next(timeoutMs?: number): Promise<WatchedList>;
  /** Resolves once the server ends the stream. */
  ended(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function openWatch(url: string, headers: Record<string, string> = {}): Promise<WatchStream> {
  const controller = new AbortController();
  const response = await within(fetch(`${url}?watch=1`, { headers, signal: controller.signal }), 10_000, 'watch GET');
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let done = false;
  const readEvent = async (): Promise<string | undefined> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        return block;
      }
      if (done) return undefined;
      const chunk = await reader.read();
      if (chunk.done) done = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  };
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    async next(timeoutMs = 10_000) {
      const read = async (): Promise<WatchedList> => {
        for (;;) {
          const block = await readEvent();
          if (block === undefined) throw new Error('the watch stream ended');
          if (block.startsWith(':')) continue;
          const lines = block.split('\n');
          if (!lines.includes('event: customizationsChanged')) throw new Error(`unexpected event ${block.slice(0, 80)}`);
          const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
          return JSON.parse(data) as WatchedList;
        }
      };
      return within(read(), timeoutMs, 'next customisations event');
    },
    async ended(timeoutMs = 10_000) {
      await within(
        (async () => {
          while ((await readEvent()) !== undefined);
        })(),
        timeoutMs,
        'watch stream end',
      );
    },
    async close() {
      controller.abort();
      await reader.cancel().catch(() => undefined);
    },
  };
}
