/**
 * The gateway's own OAuth client of a server entry, when its `upstreamAuth` has one: the
 * `clientCredentials` and `tokenExchange` modes both authenticate the gateway at `tokenUrl` with
 * the secret in `clientSecretEnv`, so every rule about that secret (the policy's
 * `envHeaderNames`, masking in logs) and that endpoint (the egress rules) applies to both alike.
 * `perUser` has none: the session brings the token. Pure.
 */
import type { ServerConfig } from './schema.js';

export interface GatewayClient {
  readonly tokenUrl: string;
  readonly clientSecretEnv: string;
  readonly allowPrivateNetwork: boolean;
}

export function gatewayClientOf(server: ServerConfig): GatewayClient | undefined {
  if (server.transport === 'stdio') return undefined;
  const auth = server.upstreamAuth;
  if (auth === undefined) return undefined;
  switch (auth.kind) {
    case 'clientCredentials':
    case 'tokenExchange':
      return auth;
    case 'perUser':
      return undefined;
    default: {
      const unreachable: never = auth;
      throw new TypeError(`unknown upstreamAuth kind ${(unreachable as { kind: string }).kind}`);
    }
  }
}
