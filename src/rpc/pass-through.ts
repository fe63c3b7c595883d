/**
 * A StandardSchema that accepts any JSON-RPC result object. The gateway relays results; it does
 * not re-validate them (the upstream and the client each validate their own side), so forwarding
 * skips the SDK's per-message schema work on the hot path.
 */
export type RpcResult = Record<string, unknown>;

export const passThroughResult = {
  '~standard': {
    version: 1 as const,
    vendor: 'portcullis',
    validate: (value: unknown) => ({ value: value as RpcResult }),
    types: undefined as unknown as { input: unknown; output: RpcResult },
  },
};
