/**
 * The rule every upstream `url` obeys, whichever layer declared it (DESIGN.md §3): `https:` to any
 * host, or plain `http:` only to loopback, and never credentials in the URL.
 *
 * Why: plain HTTP off the machine exposes the gateway's upstream headers (tokens from `envHeaders`)
 * and every tool result to the network path; userinfo (`https://user:secret@host`) is a secret in
 * a string that ends up in logs, process listings and error messages. Which *addresses* an https
 * URL may reach is the egress guard's job (src/net), not this rule's.
 *
 * Messages never include the URL or any part of it: a URL may carry a token in its userinfo,
 * path or query.
 */

export type UpstreamUrlCode = 'URL_INVALID' | 'URL_SCHEME' | 'URL_HTTP_NOT_LOOPBACK' | 'URL_USERINFO';

export type UpstreamUrlResult = { ok: true } | { ok: false; code: UpstreamUrlCode; message: string };

/** WHATWG URL serialises every IPv4 spelling (`127.1`, `0x7f000001`…) to dotted decimal. */
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
/** WHATWG URL serialises IPv6 compressed and lower-case, so `[0:0:0:0:0:0:0:1]` arrives as this. */
const LOOPBACK_V6 = '[::1]';

function failure(code: UpstreamUrlCode, message: string): UpstreamUrlResult {
  return { ok: false, code, message };
}

/** True for the hosts that plain HTTP may reach: 127.0.0.0/8, `::1`, `localhost`. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === LOOPBACK_V6 || LOOPBACK_V4.test(hostname);
}

/** Check an upstream URL against the scheme, loopback and userinfo rules. */
export function checkUpstreamUrl(url: string): UpstreamUrlResult {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return failure('URL_INVALID', 'upstream url is not a valid absolute URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return failure('URL_SCHEME', 'upstream url must use https: (or http: to a loopback host)');
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return failure('URL_USERINFO', 'upstream url must not contain credentials; use headers or envHeaders');
  }
  if (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname)) {
    return failure('URL_HTTP_NOT_LOOPBACK', 'upstream url uses http: to a non-loopback host; use https:');
  }
  return { ok: true };
}
