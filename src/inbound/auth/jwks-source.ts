/**
 * Where JWT verification keys come from: a JWKS file read once at boot, or a JWKS URL fetched
 * (and refreshed, at most once per cooldown for an unknown `kid`) through the egress guard.
 *
 * Why the egress guard: the key-set URL is an outbound request the gateway makes on its own, so
 * it obeys the rules of every URL the gateway dials (`policy/egress-target.ts`): `https:`, or
 * `http:` to loopback — or, with `allowPrivateNetwork`, to the private network and never a public
 * address; every connection is classified on the address actually dialled (no SSRF to
 * 169.254.169.254 or the LAN by DNS), redirects stay same-origin.
 *
 * Why public keys only: a private JWK (`d`) in the set means someone published a signing key; a
 * symmetric `oct` key would let whoever reads the set mint tokens. Both refuse to boot.
 *
 * Boot errors name the config field, never the file path's contents or the URL.
 */
import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { createEgressDispatcher, createGuardedFetch } from '../../net/egress-guard.js';
import { checkEgressUrl } from '../../policy/upstream-url.js';
import type { JwksConfig } from '../../config/auth-schema.js';
import type { AuthDeps } from './token-verifier.js';

export interface JwksSource {
  getKey: JWTVerifyGetKey;
  /** True when keys are fetched over the network (a failure there is not the client's fault). */
  remote: boolean;
  close(): Promise<void>;
}

/** Named in egress-guard errors and logs instead of the URL. */
export const JWKS_EGRESS_NAME = 'auth-jwks';
const JWKS_CONNECT_TIMEOUT_MS = 5_000;
const JWKS_FETCH_TIMEOUT_MS = 5_000;
/** The most of a JWKS answer that is read; past it the fetch fails (a JSON answer) or is cut. */
export const MAX_JWKS_BYTES = 256 * 1024;
/** An unknown `kid` triggers a refetch at most this often: a stream of forged kids cannot hammer the IdP. */
const JWKS_COOLDOWN_MS = 30_000;


function refuseKeys(jwks: unknown): void {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) {
    throw new TypeError('auth: auth.jwks.file must hold a JSON Web Key Set with at least one key');
  }
  for (const key of keys as unknown[]) {
    if (typeof key !== 'object' || key === null) throw new TypeError('auth: auth.jwks.file holds a key that is not an object');
    if ('d' in key) throw new TypeError('auth: auth.jwks.file holds a private key; publish public keys only');
    if ((key as { kty?: unknown }).kty === 'oct') {
      throw new TypeError('auth: auth.jwks.file holds a symmetric (oct) key; public keys only');
    }
  }
}

function fileSource(file: string): JwksSource {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new TypeError(`auth: auth.jwks.file could not be read${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  let jwks: unknown;
  try {
    jwks = JSON.parse(text);
  } catch {
    throw new TypeError('auth: auth.jwks.file is not valid JSON');
  }
  refuseKeys(jwks);
  let getKey: JWTVerifyGetKey;
  try {
    getKey = createLocalJWKSet(jwks as JSONWebKeySet);
  } catch {
    throw new TypeError('auth: auth.jwks.file is not a valid JSON Web Key Set');
  }
  return { getKey, remote: false, close: async () => {} };
}

function urlSource(url: string, allowPrivateNetwork: boolean, deps: AuthDeps): JwksSource {
  // The config loader applied the policy to this URL already; the rule is checked again because
  // this module is also built from configs that never went through it (tests, library use).
  const checked = checkEgressUrl(url, { protocol: 'http', plaintextBeyondLoopback: allowPrivateNetwork });
  if (!checked.ok) throw new TypeError(`auth.jwks.url ${checked.message}`);
  const parsed = new URL(url);
  const logger = deps.logger;
  let close = async (): Promise<void> => {};
  let fetchJwks = deps.fetchJwks;
  if (fetchJwks === undefined) {
    const dispatcher = createEgressDispatcher({
      server: JWKS_EGRESS_NAME,
      allowPrivateNetwork,
      // Plaintext keys could be swapped on the way: over http: only the private network will do.
      allowPublic: parsed.protocol === 'https:',
      connectTimeoutMs: JWKS_CONNECT_TIMEOUT_MS,
      logger,
    });
    // A key set is a few KiB: whatever its type, more than this is not one (and is never held).
    const limits = { maxMessageBytes: MAX_JWKS_BYTES, maxOtherBodyBytes: MAX_JWKS_BYTES };
    fetchJwks = createGuardedFetch({ server: JWKS_EGRESS_NAME, dispatcher, logger, limits });
    let closed: Promise<void> | undefined;
    close = () => (closed ??= dispatcher.close().catch(() => undefined));
  }
  const getKey = createRemoteJWKSet(parsed, {
    timeoutDuration: JWKS_FETCH_TIMEOUT_MS,
    cooldownDuration: JWKS_COOLDOWN_MS,
    [customFetch]: fetchJwks,
  });
  return { getKey, remote: true, close };
}

/** Compile the key source at boot. Throws TypeError for an unreadable file or a refused URL. */
export function compileJwksSource(config: JwksConfig, deps: AuthDeps): JwksSource {
  if ('file' in config) return fileSource(config.file);
  return urlSource(config.url, config.allowPrivateNetwork, deps);
}
