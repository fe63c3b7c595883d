/**
 * Which client capabilities an upstream is told about, and which server→client requests may
 * reach a client. The rule: an upstream sees exactly the capabilities of the client it serves.
 *
 * - A 2025 session's own connection is initialised with that session's client's capabilities.
 * - A connection no single client owns declares only what the gateway can honour on it:
 *   a pooled (leased) connection can relay sampling, elicitation and roots requests to the one
 *   call it serves, but never a client's `roots/list_changed`; a shared connection attributes no
 *   server→client request at all (docs/architecture.md, "Attribution"), so it declares none.
 * - On a 2026-07-28 connection each request carries the requesting client's own capabilities in
 *   `_meta` (`io.modelcontextprotocol/clientCapabilities`; MCP 2026-07-28 basic/transports,
 *   "Request Metadata": capabilities are declared per request, never inferred from earlier ones).
 * - Whatever a connection declared, a server→client request the requesting client did not declare
 *   is answered upstream at once with an error (`checkServerRequest`), never relayed: a client
 *   that declared nothing must not be asked (MCP 2025-11-25 client/roots, client/sampling,
 *   client/elicitation: each feature exists only for clients that declare it).
 */
import type { ClientCapabilities } from '@modelcontextprotocol/client';

/** The 2026-07-28 `_meta` key carrying the requesting client's capabilities. */
export const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** The capabilities a 2026-07-28 request body declares in its `_meta` envelope; undefined when none. */
export function envelopeCapabilities(body: unknown): ClientCapabilities | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const meta = ((body as { params?: { _meta?: unknown } }).params?._meta ?? undefined) as Record<string, unknown> | undefined;
  const declared = meta?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof declared === 'object' && declared !== null && !Array.isArray(declared) ? (declared as ClientCapabilities) : undefined;
}

/** What a pooled connection declares: the server→client requests a lease can relay to its call. */
export const POOLED_CONNECTION_CAPABILITIES: ClientCapabilities = Object.freeze({
  sampling: {},
  elicitation: { form: {}, url: {} },
  roots: {},
});

/** What a shared connection declares: it can attribute no server→client request to a client. */
export const SHARED_CONNECTION_CAPABILITIES: ClientCapabilities = Object.freeze({});

export type ServerRequestCheck =
  | { ok: true }
  | { ok: false; code: 'CLIENT_CAPABILITY_MISSING' | 'CLIENT_FEATURE_MISSING'; message: string };

const OK: ServerRequestCheck = { ok: true };

/** The elicitation modes a declaration allows; an empty `elicitation: {}` means form only (2025-11-25). */
export function elicitationModes(capability: ClientCapabilities['elicitation']): { form: boolean; url: boolean } {
  if (capability === undefined || capability === null) return { form: false, url: false };
  const declared = capability as { form?: unknown; url?: unknown };
  if (declared.form === undefined && declared.url === undefined) return { form: true, url: false };
  return { form: declared.form !== undefined, url: declared.url !== undefined };
}

/**
 * May a server→client request of `method` reach a client that declared `capabilities`?
 * Undefined capabilities count as none declared (fail closed). `ping` is always allowed;
 * methods this check does not know are left to the client, which answers them itself.
 *
 * Refusals say what a direct SDK client would: -32601 for a whole feature the client lacks,
 * -32602 for a variant of a declared one (an elicitation mode, tool use in sampling).
 */
export function checkServerRequest(
  capabilities: ClientCapabilities | undefined,
  method: string,
  params: Record<string, unknown> | undefined,
): ServerRequestCheck {
  const declared = capabilities ?? {};
  switch (method) {
    case 'roots/list':
      return declared.roots === undefined ? missing('roots', method) : OK;
    case 'sampling/createMessage': {
      if (declared.sampling === undefined) return missing('sampling', method);
      const usesTools = params?.tools !== undefined || params?.toolChoice !== undefined;
      const toolsDeclared = (declared.sampling as { tools?: unknown }).tools !== undefined;
      if (usesTools && !toolsDeclared) {
        return { ok: false, code: 'CLIENT_FEATURE_MISSING', message: 'the client did not declare tool use in sampling (sampling.tools)' };
      }
      return OK;
    }
    case 'elicitation/create': {
      if (declared.elicitation === undefined) return missing('elicitation', method);
      const mode = params?.mode === 'url' ? 'url' : 'form';
      if (!elicitationModes(declared.elicitation)[mode]) {
        return { ok: false, code: 'CLIENT_FEATURE_MISSING', message: `the client did not declare ${mode}-mode elicitation` };
      }
      return OK;
    }
    default:
      return OK;
  }
}

function missing(capability: string, method: string): ServerRequestCheck {
  return { ok: false, code: 'CLIENT_CAPABILITY_MISSING', message: `the client did not declare the ${capability} capability (needed for ${method})` };
}
