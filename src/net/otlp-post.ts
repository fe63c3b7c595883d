/**
 * How the trace exporter reaches its collector: one POST per batch through an egress dispatcher
 * of its own (named `otlp-traces` in every refusal and log line, never the URL), so the address
 * actually dialled is classified like a server's (loopback and private addresses only with
 * `tracing.allowPrivateNetwork`; over plain `http:` beyond loopback, never a public address),
 * redirects same-origin only. Each request is bounded by `timeoutMs`; the answer's body is not
 * read beyond a small bound (OTLP answers are tiny; a partial-success body is not acted on).
 */
import { createEgressDispatcher, type Resolve } from './egress-guard.js';
import { createGuardedFetch } from './guarded-fetch.js';
import type { Logger } from '../observability/logger.js';
import type { OtlpPost } from '../observability/otlp-exporter.js';

/** The exporter's name in egress refusals and logs. */
export const OTLP_EGRESS_NAME = 'otlp-traces';
const MAX_ANSWER_BYTES = 64 * 1024;

export interface OtlpPostOptions {
  endpoint: string;
  headers: Readonly<Record<string, string>>;
  allowPrivateNetwork: boolean;
  timeoutMs: number;
  logger: Logger;
  /** Name resolution (tests inject one); default the system resolver. */
  resolve?: Resolve;
  /** Told of each refused connection with the refused address class (metrics). */
  onRefusal?: (range: string) => void;
}

export function createOtlpPost(options: OtlpPostOptions): { post: OtlpPost; close(): Promise<void> } {
  const url = new URL(options.endpoint);
  const dispatcher = createEgressDispatcher({
    server: OTLP_EGRESS_NAME,
    allowPrivateNetwork: options.allowPrivateNetwork,
    // Spans over plaintext stay on the private network.
    allowPublic: url.protocol === 'https:',
    connectTimeoutMs: options.timeoutMs,
    logger: options.logger,
    ...(options.resolve === undefined ? {} : { resolve: options.resolve }),
    ...(options.onRefusal === undefined ? {} : { onRefusal: options.onRefusal }),
  });
  const fetch = createGuardedFetch({
    server: OTLP_EGRESS_NAME,
    dispatcher,
    logger: options.logger,
    limits: { maxMessageBytes: MAX_ANSWER_BYTES, maxOtherBodyBytes: MAX_ANSWER_BYTES },
  });
  const post: OtlpPost = async (body, contentType) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { ...options.headers, 'content-type': contentType },
      body: body as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    await response.body?.cancel().catch(() => undefined);
    return response.status;
  };
  // Destroyed, not closed: an export still hanging on a silent collector must not hold the shutdown.
  return { post, close: () => dispatcher.destroy().catch(() => undefined) };
}
