/**
 * Why the gateway's listener could not open, naming the address and the errno code and saying
 * what to change. Pure: the caller passes what `server.listen` failed with.
 */
import { GatewayError } from '../errors.js';

/** `host:port` as a URL would write it (IPv6 literals bracketed). */
export function displayAddress(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export function listenFailure(host: string, port: number, error: unknown): GatewayError {
  const code = (error as { code?: unknown } | null)?.code;
  const at = displayAddress(host, port);
  const change = 'choose another with --port or listen.port';
  switch (code) {
    case 'EADDRINUSE':
      return new GatewayError('LISTEN_FAILED', `cannot listen on ${at}: the address is already in use (EADDRINUSE); stop the process that holds it, or ${change} (0 picks a free port)`, { cause: error });
    case 'EACCES':
      return new GatewayError('LISTEN_FAILED', `cannot listen on ${at}: permission denied (EACCES); ports below 1024 need privileges: ${change}`, { cause: error });
    case 'EADDRNOTAVAIL':
      return new GatewayError('LISTEN_FAILED', `cannot listen on ${at}: no interface of this machine has that address (EADDRNOTAVAIL); fix --host or listen.host`, { cause: error });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new GatewayError('LISTEN_FAILED', `cannot listen on ${at}: the host name does not resolve (${code}); fix --host or listen.host`, { cause: error });
    default:
      return new GatewayError('LISTEN_FAILED', `cannot listen on ${at} (${typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'unknown error'})`, { cause: error });
  }
}
