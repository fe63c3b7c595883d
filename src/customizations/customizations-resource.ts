/**
 * The customisation list as an MCP resource on the aggregate endpoint: `portcullis://customizations`
 * (`application/json`, the same `{ "items": […] }` as `GET <path>/customizations`), resolved for
 * the caller — a 2025 session's own decisions and workspace, a 2026 request's named workspace —
 * and never another session's. A 2025 session may subscribe (`resources/subscribe`); it then gets
 * `notifications/resources/updated` whenever its own list changes, and not when only another
 * session's did. Subscribers are sessions, bounded by the session cap; each keeps one string.
 */
import type { CallerResources, GatewayResource, GatewayResources, ResourceCaller } from '../routing/gateway-resources.js';
import { GatewayError } from '../errors.js';
import type { DownstreamSink } from '../rpc/sink.js';
import type { CustomizationList } from './customization-list.js';
import type { Viewer } from './enablement/decisions.js';
import { SessionRecord } from './enablement/enablement.js';

export const CUSTOMIZATIONS_URI = 'portcullis://customizations';

const RESOURCE: GatewayResource = Object.freeze({
  uri: CUSTOMIZATIONS_URI,
  name: 'customizations',
  title: 'Customisations',
  description: 'The servers, plugins and agents this gateway serves, with their state and enablement, as this session sees them',
  mimeType: 'application/json',
});

interface Subscriber {
  readonly viewer: () => Viewer;
  readonly sink: DownstreamSink;
  lastJson: string;
}

function viewerOf(caller: ResourceCaller): () => Viewer {
  const session = caller.session;
  if (session instanceof SessionRecord) return () => session.viewer();
  const fixed: Viewer = caller.workspace === undefined ? {} : { workspace: caller.workspace };
  return () => fixed;
}

export function customizationsResource(list: CustomizationList): GatewayResources & { close(): void } {
  const subscribers = new Set<Subscriber>();
  const stop = list.onVersion(() => {
    for (const subscriber of subscribers) {
      const json = list.viewFor(subscriber.viewer()).json;
      if (json === subscriber.lastJson) continue;
      subscriber.lastJson = json;
      void subscriber.sink.notify({ method: 'notifications/resources/updated', params: { uri: CUSTOMIZATIONS_URI } }).catch(() => undefined);
    }
  });

  return {
    close: () => {
      stop();
      subscribers.clear();
    },
    forCaller(caller: ResourceCaller): CallerResources {
      const viewer = viewerOf(caller);
      let subscription: Subscriber | undefined;
      const unsubscribe = () => {
        if (subscription !== undefined) subscribers.delete(subscription);
        subscription = undefined;
      };
      return {
        resources: [RESOURCE],
        owns: (uri) => uri === CUSTOMIZATIONS_URI,
        read: (uri) => ({ contents: [{ uri, mimeType: RESOURCE.mimeType, text: list.viewFor(viewer()).json }] }),
        subscribe: () => {
          const sink = caller.sink;
          if (sink === undefined) throw new GatewayError('NOT_SUPPORTED', 'subscribing to the customisation list needs a session (MCP 2025-11-25 resources/subscribe)');
          if (subscription !== undefined) return;
          subscription = { viewer, sink, lastJson: list.viewFor(viewer()).json };
          subscribers.add(subscription);
        },
        unsubscribe,
        close: unsubscribe,
      };
    },
  };
}
