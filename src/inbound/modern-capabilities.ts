/**
 * The capabilities the gateway declares to 2026-07-28 clients (`server/discover`, and what the
 * SDK narrows each `subscriptions/listen` filter against).
 *
 * On that revision resource updates are delivered only on a `subscriptions/listen` stream that
 * named the URI (`resourceSubscriptions`; MCP 2026-07-28 basic/patterns/subscriptions). The
 * gateway fans upstream list changes in to those streams, but does not yet subscribe upstream to
 * the URIs 2026 listeners name, so it would never deliver such an update: it does not declare
 * `resources.subscribe` to them, and the acknowledgement of a listen then says so (the SDK
 * acknowledges only what the declared capabilities honour) instead of promising updates that
 * never come. 2025 sessions keep `resources/subscribe`, which the gateway routes upstream.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/server';

export function modernServerCapabilities(capabilities: ServerCapabilities): ServerCapabilities {
  if (capabilities.resources?.subscribe === undefined) return capabilities;
  const { subscribe: _notDelivered, ...resources } = capabilities.resources;
  return { ...capabilities, resources };
}
