/**
 * Every secret value the configuration knows about, for redaction by value: configured header
 * values, the current values of the environment variables `envHeaders` name, those values of
 * stdio servers' explicit `env` that look like credentials (by name, or long enough to be a
 * token; masking `debug` or `1` everywhere would only ruin the logs), the values of the variables
 * an operator's server entry references with `${env:NAME}` (headers, url, env, args; from six
 * characters on, for the same reason), and the trace exporter's header values. Read once at start;
 * a value that rotates later is still masked by path (header fields) but not by value.
 */

const SECRET_NAME = /TOKEN|KEY|SECRET|PASS|AUTH|CRED|COOKIE|SESSION|PRIVATE/i;
/** A referenced value shorter than this (a port, a flag) is not masked everywhere. */
const MIN_REFERENCED_SECRET = 6;
import type { GatewayConfig } from './schema.js';
import { gatewayClientOf } from './gateway-client.js';

export function configSecrets(config: Readonly<GatewayConfig>, env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets: string[] = [];
  for (const server of Object.values(config.servers)) {
    for (const { variable } of server.envReferences?.variables ?? []) {
      const value = env[variable];
      if (value !== undefined && value.length >= MIN_REFERENCED_SECRET) secrets.push(value);
    }
    if (server.transport !== 'stdio') {
      secrets.push(...Object.values(server.headers));
      const client = gatewayClientOf(server);
      for (const variable of [...Object.values(server.envHeaders), ...(client === undefined ? [] : [client.clientSecretEnv])]) {
        const value = env[variable];
        if (value !== undefined && value !== '') secrets.push(value);
      }
    } else {
      for (const [name, value] of Object.entries(server.env)) {
        if (SECRET_NAME.test(name) || value.length >= 16) secrets.push(value);
      }
    }
  }
  // The cluster's shared secret and a Redis URL's password travel in config and env too.
  const clusterSecret = env.PORTCULLIS_CLUSTER_SECRET;
  if (clusterSecret !== undefined && clusterSecret !== '') secrets.push(clusterSecret);
  const redisUrl = config.eventStore.url;
  if (redisUrl !== undefined) {
    try {
      const password = decodeURIComponent(new URL(redisUrl).password);
      if (password !== '') secrets.push(password, redisUrl);
    } catch {
      // Not a URL: the config check reports it; nothing to mask.
    }
  }
  // The trace exporter's headers (a collector's API key), from its block and the OTEL variables.
  for (const variable of Object.values(config.tracing?.envHeaders ?? {})) {
    const value = env[variable];
    if (value !== undefined && value !== '') secrets.push(value);
  }
  for (const variable of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    for (const entry of (env[variable] ?? '').split(',')) {
      const value = entry.slice(entry.indexOf('=') + 1).trim();
      if (entry.includes('=') && value !== '') secrets.push(value, safeDecode(value));
    }
  }
  if (config.auth?.kind === 'bearer') {
    for (const token of config.auth.tokens) {
      const value = env[token.env];
      if (value !== undefined && value !== '') secrets.push(value);
    }
  }
  return secrets;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
