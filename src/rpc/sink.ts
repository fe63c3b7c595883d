/**
 * Where messages that an upstream originates go: the downstream client, and when possible the
 * one stream of the call that caused them. A leaf both sides share: `upstream/` delivers to a
 * sink without knowing about inbound HTTP, and `inbound/` implements one without importing
 * `upstream/` (docs/architecture.md, "Module map").
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';

export interface RpcMessage {
  method: string;
  params?: Record<string, unknown>;
}

export interface DownstreamSink {
  /** A server→client request (sampling, elicitation, roots). Resolves with the client's result. */
  request(message: RpcMessage, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** A server→client notification (logging, progress, resource updates, list changes). */
  notify(message: RpcMessage): Promise<void>;
  /** True when the client side can receive server→client requests on this sink. */
  readonly canRequest: boolean;
  /**
   * What the client behind this sink declared (its `initialize`, or a 2026 request's `_meta`).
   * Server→client requests it did not declare are refused before they reach it; absent counts
   * as nothing declared (client-capabilities.ts).
   */
  readonly clientCapabilities?: ClientCapabilities;
}

/**
 * Tells the client behind `sink` that its tools, prompts and resources lists all changed (it
 * lists again): best effort, as every list-change notification is.
 */
export function notifyListsChanged(sink: Pick<DownstreamSink, 'notify'>): void {
  for (const list of ['tools', 'prompts', 'resources'] as const) void sink.notify({ method: `notifications/${list}/list_changed` }).catch(() => undefined);
}

/**
 * The sink of a request the gateway itself sends upstream (a subscription, a task poll): no
 * client is behind it, so nothing is relayed and every server→client request is refused.
 */
export const REFUSING_SINK: DownstreamSink = {
  canRequest: false,
  request: () => Promise.reject(new Error('no client to ask')),
  notify: () => Promise.resolve(),
};
