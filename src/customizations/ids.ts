/**
 * Customisation ids: opaque, and stable for the gateway's lifetime. An id is a keyed hash of the
 * item's durable key (`config#mcp=<name>`, `plugin:<name>#mcp=<server>`, …) under a secret drawn
 * once per process, so the same item keeps its id while the process lives, a client cannot derive
 * one id from another or from a name, and durable keys (where stored decisions live) never reach
 * the wire. Ids are not meant to survive a restart; keys are.
 */
import { createHmac, randomBytes } from 'node:crypto';

export interface IdMinter {
  /** The id of the item with this durable key. */
  idFor(key: string): string;
  /** The durable key of an id this minter gave out; undefined for any other string. */
  keyFor(id: string): string | undefined;
}

/** A minter with a fresh secret (one per gateway). */
export function createIdMinter(secret: Buffer = randomBytes(32)): IdMinter {
  // Both bounded by the items the gateway lists: keys come from its own declarations, never a client.
  const cache = new Map<string, string>();
  const keys = new Map<string, string>();
  return {
    idFor(key) {
      let id = cache.get(key);
      if (id === undefined) {
        id = createHmac('sha256', secret).update(key, 'utf8').digest('base64url').slice(0, 22);
        cache.set(key, id);
        keys.set(id, key);
      }
      return id;
    },
    keyFor(id) {
      return keys.get(id);
    },
  };
}
