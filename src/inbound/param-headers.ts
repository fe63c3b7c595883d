/**
 * `Mcp-Param-{Name}` headers of a 2026-07-28 request, to be passed on to the upstream that serves
 * it. MCP 2026-07-28 basic/transports/streamable-http, "Server Behavior for Custom Headers":
 * an intermediary that does not recognise an `Mcp-Param-*` header MUST forward it and otherwise
 * ignore it. The gateway declares no `x-mcp-header` of its own (it relays each upstream's tool
 * schemas as they are), so it recognises none: every one goes on to the upstream that owns the
 * call, which validates it against the body it receives — the same arguments the client sent.
 *
 * Earlier revisions define no such headers; a 2025-era request's are not forwarded. Names and
 * values were already checked by the HTTP layer (a `Headers` object holds only valid ones) and
 * the edge bounds header bytes; the count is bounded here too.
 */

const PREFIX = 'mcp-param-';

/** More than any tool schema sensibly declares; the rest are not forwarded. */
export const MAX_FORWARDED_PARAM_HEADERS = 32;

/** The request's `Mcp-Param-*` headers (lower-cased names), or undefined when it has none. */
export function paramHeadersOf(headers: Headers | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  let found: Record<string, string> | undefined;
  let count = 0;
  headers.forEach((value, name) => {
    if (!name.startsWith(PREFIX) || count >= MAX_FORWARDED_PARAM_HEADERS) return;
    found ??= {};
    found[name] = value;
    count += 1;
  });
  return found;
}
