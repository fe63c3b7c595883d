/**
 * Reading headers as the client sent them. The Fetch `Headers` object joins repeated lines
 * ("a, b") or keeps only one of them, which hides the duplicated Host, Origin or Authorization a
 * guard must refuse; under @hono/node-server the raw lines are on the Node request.
 */
import type { Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { RequestListener } from 'node:http';

export type NodeRequestView = Pick<HttpBindings['incoming'], 'rawHeaders' | 'url'>;

/** The Node request behind a Hono context, when running under @hono/node-server. */
export function nodeRequest(c: Context): NodeRequestView | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  const incoming = (env as { incoming: unknown }).incoming;
  if (typeof incoming !== 'object' || incoming === null) return undefined;
  const view = incoming as Partial<NodeRequestView>;
  return Array.isArray(view.rawHeaders) ? (view as NodeRequestView) : undefined;
}

/** Every value of the named headers (lower-case names), one per line as received where known. */
export function headerLines(c: Context, names: ReadonlySet<string>): string[] {
  const incoming = nodeRequest(c);
  const values: string[] = [];
  if (incoming !== undefined) {
    const raw = incoming.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      if (names.has((raw[i] ?? '').toLowerCase())) values.push(raw[i + 1] ?? '');
    }
    return values;
  }
  for (const name of names) {
    const value = name.startsWith(':') ? null : c.req.raw.headers.get(name);
    if (value !== null) values.push(value);
  }
  return values;
}

/**
 * Wraps a Node request listener so the parsed Host header reaches it lower-cased.
 *
 * Why: @hono/node-server builds the request URL from `headers.host` and answers 400, before any
 * handler runs, when the URL's hostname is not the header's own text — which it never is for
 * `Host: LOCALHOST:8787`, since URL parsing lower-cases names. Hostnames are case-insensitive
 * (RFC 9110 §7.2, RFC 4343), so an allowed host in capitals must be served like any other. Only
 * the parsed copy changes: the Host guard judges `rawHeaders`, which keep every line as sent.
 */
export function withLowerCaseHost(listener: RequestListener): RequestListener {
  return function lowerCaseHost(request, response) {
    const host = request.headers.host;
    if (host !== undefined && host !== host.toLowerCase()) request.headers.host = host.toLowerCase();
    listener(request, response);
  };
}
