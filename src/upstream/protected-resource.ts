/**
 * An HTTP upstream's protected resource metadata (RFC 9728), fetched from the URL its challenge
 * names and kept as the RFC spells it (snake_case), for the customisation list's `authRequired`
 * state: what a host needs to start the upstream's authorization flow.
 *
 * The document is fetched through the server's own egress dispatcher (the same address rules as
 * the upstream itself, redirects same-origin only) but without any of the server's configured
 * headers: the metadata URL may be on another origin, and the upstream's credentials are for the
 * upstream alone. It is read bounded (64 KiB), and only the RFC's registered fields of the right
 * types are kept, each bounded, so an upstream cannot put arbitrary data into the list.
 */
import type { Dispatcher } from 'undici';
import { UpstreamError } from '../errors.js';
import { createGuardedFetch } from '../net/guarded-fetch.js';
import type { Logger } from '../observability/logger.js';
import { safeReason } from './failure.js';

/** RFC 9728 §2 metadata, snake_case; `resource` is required. */
export type ProtectedResourceMetadata = Readonly<Record<string, unknown>> & { readonly resource: string };

const MAX_DOCUMENT_BYTES = 64 * 1024;
const MAX_STRING_CHARS = 2_048;
const MAX_ARRAY_ITEMS = 64;

const STRING_FIELDS = ['resource', 'jwks_uri', 'resource_name', 'resource_documentation', 'resource_policy_uri', 'resource_tos_uri'];
const ARRAY_FIELDS = [
  'authorization_servers',
  'scopes_supported',
  'bearer_methods_supported',
  'resource_signing_alg_values_supported',
  'resource_encryption_alg_values_supported',
  'resource_encryption_enc_values_supported',
  'authorization_details_types_supported',
  'dpop_signing_alg_values_supported',
];
const BOOLEAN_FIELDS = ['tls_client_certificate_bound_access_tokens', 'dpop_bound_access_tokens_required'];

const isString = (value: unknown): value is string => typeof value === 'string' && value.length > 0 && value.length <= MAX_STRING_CHARS;

/** Why a document cannot be used; the message names no URL and quotes nothing of the document. */
export type MetadataVerdict = { ok: true; metadata: ProtectedResourceMetadata } | { ok: false; why: string };

/**
 * The registered fields of `document`, checked: `resource` must identify the upstream at
 * `upstreamUrl` (same origin, and a path the upstream's is inside), since metadata naming another
 * resource must not be used (RFC 9728 §3.3).
 */
export function readProtectedResourceMetadata(document: unknown, upstreamUrl: string): MetadataVerdict {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return { ok: false, why: 'is not a JSON object' };
  const fields = document as Record<string, unknown>;
  if (!isString(fields.resource)) return { ok: false, why: 'has no resource' };
  let resource: URL;
  try {
    resource = new URL(fields.resource);
  } catch {
    return { ok: false, why: 'names a resource that is not a URL' };
  }
  const upstream = new URL(upstreamUrl);
  const prefix = resource.pathname.endsWith('/') ? resource.pathname : `${resource.pathname}/`;
  const inside = upstream.pathname === resource.pathname || upstream.pathname.startsWith(prefix) || resource.pathname === '/';
  if (resource.origin !== upstream.origin || !inside) return { ok: false, why: 'names another resource than this server' };
  const kept: Record<string, unknown> = {};
  for (const name of STRING_FIELDS) if (isString(fields[name])) kept[name] = fields[name];
  for (const name of ARRAY_FIELDS) {
    const value = fields[name];
    if (Array.isArray(value) && value.length <= MAX_ARRAY_ITEMS && value.every(isString)) kept[name] = [...value];
  }
  for (const name of BOOLEAN_FIELDS) if (typeof fields[name] === 'boolean') kept[name] = fields[name];
  return { ok: true, metadata: Object.freeze(kept) as ProtectedResourceMetadata };
}

export interface MetadataFetchOptions {
  readonly server: string;
  readonly upstreamUrl: string;
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
}

/**
 * Fetches and checks the metadata at `metadataUrl`; rejects with an `UpstreamError` naming the
 * server and a cause code only (an egress refusal as the guard raised it).
 */
export async function fetchProtectedResourceMetadata(metadataUrl: string, options: MetadataFetchOptions): Promise<ProtectedResourceMetadata> {
  const { server } = options;
  const fetchMetadata = createGuardedFetch({
    server,
    dispatcher: options.dispatcher,
    logger: options.logger,
    limits: { maxMessageBytes: MAX_DOCUMENT_BYTES, maxOtherBodyBytes: MAX_DOCUMENT_BYTES },
  });
  const unreadable = (why: string, cause?: unknown) =>
    new UpstreamError('UPSTREAM_UNAVAILABLE', server, `asks for authorization, but its protected resource metadata ${why}`, cause);
  let response: Response;
  try {
    response = await fetchMetadata(metadataUrl, { method: 'GET', headers: { accept: 'application/json' } });
  } catch (error) {
    if (error instanceof UpstreamError && error.code === 'UPSTREAM_BLOCKED') throw error;
    throw unreadable(`could not be fetched (${safeReason(error)})`, error);
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    throw unreadable(`could not be fetched (HTTP ${response.status})`);
  }
  let document: unknown;
  try {
    document = JSON.parse(await response.text());
  } catch (error) {
    throw unreadable('is not JSON', error);
  }
  const verdict = readProtectedResourceMetadata(document, options.upstreamUrl);
  if (!verdict.ok) throw unreadable(verdict.why);
  return verdict.metadata;
}
