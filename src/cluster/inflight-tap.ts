/**
 * Watches a request's SSE response on its way to the client for the first event id, which names
 * the stream the request is answered on (`<streamId>::<seq>`). The owner records that stream in
 * Redis before the client sees the id, so if the owner dies with the request unanswered, the
 * replica taking over knows where to put the failover error: whatever event id the client can
 * resume from, the record already exists (exactly-once answers).
 */
import { parseEventId } from '../session/event-id.js';

/** Bytes searched for the first `id:` line; past this the response is passed through untouched. */
const MAX_SCAN = 64 * 1024;

export interface InflightTapHooks {
  /** Called once with the stream id; the event is held until it settles. */
  recorded(streamId: string): Promise<void>;
  /** The whole response reached the client (the answer was delivered). */
  delivered(): void;
}

/** The stream id of the first `id:` field in `text`, if a complete one is there. */
export function firstStreamId(text: string): string | undefined {
  const found = /(?:^|\n)id:[ ]?([^\r\n]*)\r?\n/.exec(text);
  if (found === null) return undefined;
  return parseEventId(found[1] ?? '')?.streamId;
}

/** `response` with its body watched; non-SSE responses are returned as they are. */
export function tapInflight(response: Response, hooks: InflightTapHooks): Response {
  const type = response.headers.get('content-type') ?? '';
  if (response.body === null || !type.startsWith('text/event-stream')) return response;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let scanned = '';
  let searching = true;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          hooks.delivered();
          controller.close();
          return;
        }
        if (searching) {
          scanned += decoder.decode(value, { stream: true });
          const streamId = firstStreamId(scanned);
          if (streamId !== undefined || scanned.length > MAX_SCAN) {
            searching = false;
            scanned = '';
            if (streamId !== undefined) await hooks.recorded(streamId).catch(() => undefined);
          }
        }
        controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    async cancel(reason) {
      await reader.cancel(reason).catch(() => undefined);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
