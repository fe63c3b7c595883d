/**
 * A failure as a span records it (`error.type`, `rpc.response.status_code`): the JSON-RPC code
 * answered and a low-cardinality type — the gateway's own error code when it has one, else the
 * JSON-RPC code. Never the message (it can name what the client sent).
 */
import { toJsonRpcError } from '../errors.js';
import type { SpanFailure } from './tracing.js';

export function spanFailureOf(error: unknown): SpanFailure {
  const wire = toJsonRpcError(error);
  const code = (wire.data as { code?: unknown } | undefined)?.code;
  return { code: wire.code, type: typeof code === 'string' ? code : String(wire.code) };
}
