/**
 * What a Streamable HTTP upstream's call gets when an event of its SSE answer is over the
 * message cap: the stream is reset (`net/sse-event-bound.ts`), and every request the POST
 * carried is answered with the gateway's `UPSTREAM_MESSAGE_TOO_LARGE` error, as one SSE event
 * each, so the call fails at once with an error naming the server rather than waiting out its
 * timeout (the SDK client only settles a request with a response).
 */
import { errorMessage } from '../errors.js';
import { messageTooLarge } from '../net/dispatch-hop.js';

type Id = string | number;

function requestIds(requestBody: unknown): Id[] {
  if (typeof requestBody !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(requestBody);
  } catch {
    return [];
  }
  const ids: Id[] = [];
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    if (typeof message !== 'object' || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.push(id);
  }
  return ids;
}

/** SSE bytes answering each request of `requestBody` with the over-cap error; `undefined` when it carried none. */
export function oversizedAnswers(server: string, maxMessageBytes: number, requestBody: unknown): Buffer | undefined {
  const ids = requestIds(requestBody);
  if (ids.length === 0) return undefined;
  const error = messageTooLarge(server, maxMessageBytes);
  return Buffer.from(ids.map((id) => `event: message\ndata: ${JSON.stringify(errorMessage(id, error))}\n\n`).join(''));
}
