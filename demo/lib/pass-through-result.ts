/**
 * A StandardSchema that accepts any JSON-RPC result object, for an SDK `Client` that sends a raw
 * request (`client.request(message, passThroughResult)`) and wants the result as it came. The
 * gateway itself no longer needs one (its upstream links are its own); the tests and the compat
 * bench drive raw requests with it.
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
