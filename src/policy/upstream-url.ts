/**
 * The rule every URL the gateway dials obeys, whichever config field or layer named it: the
 * encrypted scheme to any host, the plaintext one to loopback only, never a URL that is not
 * absolute.
 *
 * - An MCP upstream (`servers.*.url`): `https:`, or `http:` to 127.0.0.0/8, `::1` or `localhost`;
 *   no credentials in the URL.
 * - A connection the gateway makes on its own behalf (`auth.jwks.url`, `eventStore.url`, cluster
 *   peers): the same, and a plaintext scheme may also reach beyond loopback when the field opts
 *   into the private network — a Redis or a replica next door speaking plain TCP is normal; the
 *   egress guard then refuses any public address for it at connect time, so plaintext never
 *   leaves the private network. Redis URLs may carry the Redis password (it is treated as a
 *   secret everywhere).
 *
 * Why: plaintext off the machine exposes the gateway's upstream headers (tokens from `envHeaders`),
 * every tool result, a key set that decides who may log in, or session history to the network
 * path; userinfo in an HTTP URL is a secret in a string that ends up in logs, process listings
 * and error messages. Which *addresses* a URL may reach is the egress guard's job (src/net).
 *
 * Messages never include the URL or any part of it: a URL may carry a token in its userinfo,
 * path or query. They describe the value; the caller names the field.
 */

export type UpstreamUrlCode = 'URL_INVALID' | 'URL_SCHEME' | 'URL_HTTP_NOT_LOOPBACK' | 'URL_USERINFO';

export type UpstreamUrlResult = { ok: true } | { ok: false; code: UpstreamUrlCode; message: string };

/** Which family of schemes a field speaks. */
export type UrlProtocol = 'http' | 'redis';

export interface UrlRuleOptions {
  protocol: UrlProtocol;
  /** The field opted into the private network and may use plaintext beyond loopback. */
  plaintextBeyondLoopback: boolean;
}

interface SchemeFamily {
  encrypted: string;
  plaintext: string;
  userinfo: boolean;
}

const FAMILIES: Readonly<Record<UrlProtocol, SchemeFamily>> = Object.freeze({
  http: { encrypted: 'https:', plaintext: 'http:', userinfo: false },
  redis: { encrypted: 'rediss:', plaintext: 'redis:', userinfo: true },
});

/** WHATWG URL serialises every IPv4 spelling (`127.1`, `0x7f000001`…) to dotted decimal. */
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
/** WHATWG URL serialises IPv6 compressed and lower-case, so `[0:0:0:0:0:0:0:1]` arrives as this. */
const LOOPBACK_V6 = '[::1]';

function failure(code: UpstreamUrlCode, message: string): UpstreamUrlResult {
  return { ok: false, code, message };
}

/** True for the hosts plaintext may always reach: 127.0.0.0/8, `::1`, `localhost`. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === LOOPBACK_V6 || LOOPBACK_V4.test(hostname);
}

/**
 * The host a URL dials, canonical as an `http:` URL would have it (lower case, IPv4 in dotted
 * decimal, IPv6 compressed in brackets): `redis:` URLs are not WHATWG-special, so their host
 * arrives as typed (`LOCALHOST`, `127.1`). Undefined when there is none to be had.
 */
export function canonicalHostname(parsed: URL): string | undefined {
  if (parsed.hostname === '') return undefined;
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.hostname;
  try {
    return new URL(`http://${parsed.hostname}/`).hostname;
  } catch {
    return undefined;
  }
}

/** Checks a URL against the scheme, loopback and userinfo rules of its field. */
export function checkEgressUrl(url: string, options: UrlRuleOptions): UpstreamUrlResult {
  const family = FAMILIES[options.protocol];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return failure('URL_INVALID', 'is not a valid absolute URL');
  }
  const plain = family.plaintext.slice(0, -1);
  if (parsed.protocol !== family.encrypted && parsed.protocol !== family.plaintext) {
    return failure('URL_SCHEME', `must use ${family.encrypted} (or ${family.plaintext} to a loopback host)`);
  }
  const hostname = canonicalHostname(parsed);
  if (hostname === undefined) return failure('URL_INVALID', 'is not a valid absolute URL');
  if (!family.userinfo && (parsed.username !== '' || parsed.password !== '')) {
    return failure('URL_USERINFO', 'must not contain credentials; use headers or envHeaders');
  }
  if (parsed.protocol === family.plaintext && !isLoopbackHost(hostname) && !options.plaintextBeyondLoopback) {
    return failure('URL_HTTP_NOT_LOOPBACK', `uses ${plain}: to a non-loopback host; use ${family.encrypted}`);
  }
  return { ok: true };
}

/** The rule for an MCP upstream's `url`: `https:`, or `http:` to a loopback host; no credentials. */
export function checkUpstreamUrl(url: string): UpstreamUrlResult {
  return checkEgressUrl(url, { protocol: 'http', plaintextBeyondLoopback: false });
}
