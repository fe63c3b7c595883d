/**
 * The headers an HTTP upstream receives (docs/decisions.md, "Headers upstream"): an allowlist of the
 * protocol headers the SDK client transport sets on its own request, then the server's configured
 * `headers`, then its `envHeaders` (read from the environment when each request is built, so a
 * rotated secret is picked up without a restart; an env-sourced value wins over a configured one
 * of the same name). A configured value written with `${env:NAME}` references (an operator's
 * config file only: config/env-references.ts) is filled in the same way, when each request is
 * built; when one of its variables is unset or not allowed, the header is left out whole and
 * reported, never sent short.
 *
 * Why an allowlist: whatever is on the transport's request that we did not choose must not reach
 * the upstream. In particular `Authorization` is never passed through (a downstream client's token
 * is for the gateway, not for the upstream: token passthrough is forbidden by the MCP
 * authorization spec, "Access Token Privilege Restriction"); it comes only from configuration.
 * Hop-by-hop headers (RFC 9110 §7.6.1), including any named in `Connection`, are stripped, and
 * configuration may not set them or the protocol headers the transport owns (a configured
 * `Mcp-Session-Id` would hijack the upstream session).
 *
 * A value with CR, LF, NUL or another control character is refused without being echoed:
 * `new Headers()` would throw with the value (a secret) in its message.
 */

import { expandTemplate, templateVariables, type Template } from '../config/env-references.js';

/** Protocol headers the SDK client transport sets and the upstream needs (SDK 2.4 client). */
const PASS_THROUGH = new Set([
  'content-type',
  'accept',
  'mcp-protocol-version',
  /** The upstream's own session id, held by our client transport (never the downstream one). */
  'mcp-session-id',
  'last-event-id',
  /** 2026-era (SEP-2243) request headers mirrored from the body. */
  'mcp-method',
  'mcp-name',
]);
/** SEP-2243 `Mcp-Param-{Name}` headers, mirrored from `tools/call` arguments a tool declares. */
const PASS_THROUGH_PREFIX = 'mcp-param-';

/** RFC 9110 §7.6.1 hop-by-hop headers, plus those the HTTP client computes itself. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'content-length']);
const HOP_BY_HOP_PREFIX = 'proxy-';

/** RFC 9110 §5.6.2 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;
/** RFC 9110 §5.5 field-value: the same test as node:http's `checkInvalidHeaderChar`. */
const UNSAFE_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

export type HeaderNameCheck = { ok: true } | { ok: false; code: 'HEADER_NAME_INVALID' | 'HEADER_NAME_RESERVED'; message: string };

export type SkipReason = 'missing' | 'unsafe-value' | 'not-allowed';

/** An `envHeaders` entry left out of one request. Names only: never the value. */
export interface SkippedHeader {
  header: string;
  variable: string;
  reason: SkipReason;
}

export interface OutboundHeaders {
  /** Lower-case names; every value safe for `new Headers()`. */
  headers: Record<string, string>;
  skipped: SkippedHeader[];
}

export interface OutboundHeadersOptions {
  /** Configured header name → value. */
  headers: Record<string, string>;
  /** Header name → environment variable name. */
  envHeaders: Record<string, string>;
  /** Header name (as in `headers`) → its compiled `${env:NAME}` template, for the values that hold references. */
  templates?: Readonly<Record<string, Template>>;
  /** Environment variable names the policy lets servers read; `undefined` allows any. */
  allowedEnvNames?: readonly string[];
}

export interface OutboundHeaderBuilder {
  build(incoming: Headers | Record<string, string>, readEnv: (name: string) => string | undefined): OutboundHeaders;
}

function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith(HOP_BY_HOP_PREFIX);
}

function isPassThrough(name: string): boolean {
  return PASS_THROUGH.has(name) || name.startsWith(PASS_THROUGH_PREFIX);
}

/** Whether a header value is safe to send (and to hand to `new Headers()`). */
export function isSafeHeaderValue(value: string): boolean {
  return !UNSAFE_VALUE.test(value);
}

/**
 * May configuration (`headers` or `envHeaders`) set a header of this name? Not when it is not a
 * valid name, is hop-by-hop, or is a protocol header the transport owns. For config diagnostics.
 */
export function checkOutboundHeaderName(name: string): HeaderNameCheck {
  const lower = name.toLowerCase();
  if (!TOKEN.test(lower)) {
    return { ok: false, code: 'HEADER_NAME_INVALID', message: 'is not a valid HTTP header name' };
  }
  if (isHopByHop(lower)) {
    return { ok: false, code: 'HEADER_NAME_RESERVED', message: `"${lower}" is a hop-by-hop header and cannot be configured` };
  }
  if (isPassThrough(lower)) {
    return { ok: false, code: 'HEADER_NAME_RESERVED', message: `"${lower}" is set by the MCP transport and cannot be configured` };
  }
  return { ok: true };
}

interface EnvEntry {
  header: string;
  variable: string;
  allowed: boolean;
}

function entriesOf(incoming: Headers | Record<string, string>): [string, string][] {
  if (!(incoming instanceof Headers)) return Object.entries(incoming);
  const entries: [string, string][] = [];
  incoming.forEach((value, name) => entries.push([name, value]));
  return entries;
}

/** The header names listed in the incoming `Connection` value(s): hop-by-hop for this request. */
function connectionNamed(incoming: Headers | Record<string, string>): Set<string> {
  const named = new Set<string>();
  for (const [name, value] of entriesOf(incoming)) {
    if (name.toLowerCase() !== 'connection' || typeof value !== 'string') continue;
    for (const token of value.split(',')) named.add(token.trim().toLowerCase());
  }
  return named;
}

/**
 * Compile one server's outbound header rules. Throws `TypeError` (naming the header, never the
 * value) for a configured name that `checkOutboundHeaderName` refuses, a configured value that is
 * not a safe header value, or two entries whose names differ only in case.
 */
export function compileOutboundHeaders(options: OutboundHeadersOptions): OutboundHeaderBuilder {
  const allowedEnv = options.allowedEnvNames === undefined ? undefined : new Set(options.allowedEnvNames);
  const configured: [string, string][] = [];
  const templated: { header: string; template: Template; refused: string | undefined }[] = [];
  const seen = new Set<string>();

  const claim = (name: string, field: string): string => {
    const check = checkOutboundHeaderName(name);
    if (!check.ok) {
      throw new TypeError(check.code === 'HEADER_NAME_INVALID' ? `${field}: a header name ${check.message}` : `${field}: header ${check.message}`);
    }
    const lower = name.toLowerCase();
    if (seen.has(`${field}:${lower}`)) throw new TypeError(`${field}: header "${lower}" is listed twice`);
    seen.add(`${field}:${lower}`);
    return lower;
  };

  for (const [name, value] of Object.entries(options.headers)) {
    const lower = claim(name, 'headers');
    const template = options.templates?.[name];
    if (template !== undefined) {
      // A variable the policy does not grant is never read, not even to see whether it is set.
      const refused = templateVariables(template).find((variable) => allowedEnv !== undefined && !allowedEnv.has(variable));
      templated.push({ header: lower, template, refused });
      continue;
    }
    if (typeof value !== 'string' || !isSafeHeaderValue(value)) {
      throw new TypeError(`headers: the value of header "${lower}" contains a character not allowed in a header value`);
    }
    configured.push([lower, value]);
  }
  const fromEnv: EnvEntry[] = Object.entries(options.envHeaders).map(([name, variable]) => ({
    header: claim(name, 'envHeaders'),
    variable,
    allowed: allowedEnv === undefined || allowedEnv.has(variable),
  }));

  return {
    build(incoming, readEnv) {
      const headers: Record<string, string> = {};
      const skipped: SkippedHeader[] = [];
      const dropped = connectionNamed(incoming);

      for (const [rawName, value] of entriesOf(incoming)) {
        const name = rawName.toLowerCase();
        if (!isPassThrough(name) || isHopByHop(name) || dropped.has(name)) continue;
        if (typeof value !== 'string' || !isSafeHeaderValue(value)) continue;
        headers[name] = value;
      }
      for (const [name, value] of configured) headers[name] = value;
      for (const { header, template, refused } of templated) {
        if (refused !== undefined) {
          skipped.push({ header, variable: refused, reason: 'not-allowed' });
          continue;
        }
        const filled = expandTemplate(template, readEnv);
        if (!filled.ok) skipped.push({ header, variable: filled.variable, reason: 'missing' });
        else if (!isSafeHeaderValue(filled.value)) skipped.push({ header, variable: templateVariables(template).join(','), reason: 'unsafe-value' });
        else headers[header] = filled.value;
      }
      for (const { header, variable, allowed } of fromEnv) {
        // A variable the policy does not grant is never read, not even to see whether it is set.
        if (!allowed) {
          skipped.push({ header, variable, reason: 'not-allowed' });
          continue;
        }
        const value = readEnv(variable);
        if (value === undefined) skipped.push({ header, variable, reason: 'missing' });
        else if (!isSafeHeaderValue(value)) skipped.push({ header, variable, reason: 'unsafe-value' });
        else headers[header] = value;
      }
      return { headers, skipped };
    },
  };
}
