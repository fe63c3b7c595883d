/**
 * A view of a transport that reports every message handed to it just before it is sent, so a
 * link can note the JSON-RPC id of each request it sends (the SDK's `Client.request` does not
 * return it). Everything else — callbacks, session id, the era hooks the SDK probes for — is
 * the transport's own: reads and writes go straight to it.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';

export function tapSends(transport: Transport, onSend: (message: JSONRPCMessage) => void): Transport {
  const send: Transport['send'] = (message, options) => {
    onSend(message);
    return transport.send(message, options);
  };
  return new Proxy(transport, {
    get(target, property) {
      if (property === 'send') return send;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(target, property, value) {
      return Reflect.set(target, property, value, target);
    },
  });
}
