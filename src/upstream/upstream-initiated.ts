/**
 * What an upstream originates on a link, as the SDK client dispatches it: link-level
 * notifications (`list_changed`, `resources/updated`, `tasks/status`) become link events
 * (`link-event.ts`), and a server→client request (sampling, elicitation, roots) goes to the
 * downstream `attribution.ts` tied it to, only when that client declared the capability
 * (rpc/client-capabilities.ts); otherwise it is refused with a JSON-RPC error, never guessed.
 * Every other notification was already relayed, in arrival order, by `Attribution.claim`.
 */
import { ProtocolError, type Client } from '@modelcontextprotocol/client';
import type { Logger } from '../observability/logger.js';
import { GatewayError, toJsonRpcError } from '../errors.js';
import { checkServerRequest } from '../rpc/client-capabilities.js';
import type { Attribution } from './attribution.js';
import type { LinkEvent } from './link-event.js';
import type { ChangedList } from './server-changes.js';

export interface UpstreamInitiatedOptions {
  /** The link's attribution: whose call a server→client request belongs to. */
  attribution: Attribution;
  logger: Logger;
  /** An upstream's `list_changed`: the link drops that cached list and tells its listeners. */
  listChanged(list: ChangedList): void;
  /** A link-level event for the link's listeners. */
  emit(event: LinkEvent): void;
}

/** Installs the SDK client's fallback handlers for what the upstream originates. */
export function handleUpstreamInitiated(client: Client, options: UpstreamInitiatedOptions): void {
  const { attribution, logger } = options;
  client.fallbackNotificationHandler = async (notification) => {
    const params = notification.params as Record<string, unknown> | undefined;
    switch (notification.method) {
      case 'notifications/tools/list_changed':
        options.listChanged('tools');
        return;
      case 'notifications/prompts/list_changed':
        options.listChanged('prompts');
        return;
      case 'notifications/resources/list_changed':
        options.listChanged('resources');
        return;
      case 'notifications/resources/updated':
        options.emit({ kind: 'resourceUpdated', params: params ?? {} });
        return;
      case 'notifications/tasks/status':
        options.emit({ kind: 'taskStatus', params: params ?? {} });
        return;
      default:
        return; // relayed in arrival order by `claim`
    }
  };

  client.fallbackRequestHandler = async (request, ctx) => {
    const sink = attribution.takeRequestSink(ctx.mcpReq.id, request.method);
    if (sink === undefined || !sink.canRequest) {
      throw refusal(
        new GatewayError(
          'UNATTRIBUTABLE',
          sink === undefined ? 'gateway cannot attribute this request to a client call' : 'the client of this call cannot receive server requests',
        ),
      );
    }
    const params = request.params as Record<string, unknown> | undefined;
    const allowed = checkServerRequest(sink.clientCapabilities, request.method, params);
    if (!allowed.ok) {
      logger.debug({ method: request.method, code: allowed.code }, 'refused an upstream request the client did not declare');
      throw refusal(new GatewayError(allowed.code, allowed.message));
    }
    return sink.request(
      { method: request.method, params: request.params as Record<string, unknown> | undefined },
      ctx.mcpReq.signal,
    ) as never;
  };
}

/** A gateway refusal as the JSON-RPC error the SDK answers the upstream's request with. */
function refusal(error: GatewayError): ProtocolError {
  const wire = toJsonRpcError(error);
  return new ProtocolError(wire.code, wire.message, wire.data);
}
