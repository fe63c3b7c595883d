/**
 * How one upstream connection settles on a protocol era, over the gateway's own peer (peer.ts):
 * - `legacy`: the 2025 `initialize` handshake (MCP 2025-11-25, basic/lifecycle), then
 *   `notifications/initialized`;
 * - `auto`: a `server/discover` probe carrying the 2026 `_meta` envelope (MCP 2026-07-28,
 *   basic/lifecycle, "Version negotiation"). A discover result naming 2026-07-28 makes the
 *   connection a 2026 one; an answer that shows the server does not know the probe (a JSON-RPC
 *   error, an HTTP 4xx other than 401/403, a result that is no discover result) falls back to
 *   `initialize` on the same connection; a refusal of authorization, a 5xx, a network error or a
 *   timeout fails the connection (the same verdicts the SDK client gives its probe).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  type ClientCapabilities,
  type ServerCapabilities,
} from '@modelcontextprotocol/client';
import { httpStatusOf, UpstreamError, UpstreamRpcError } from '../errors.js';
import type { RpcPeer } from './peer.js';
import { PROTOCOL_2026, VERSIONS_2025 } from '../rpc/era.js';


/** Who the gateway says it is upstream. */
export const CLIENT_INFO = Object.freeze({ name: 'portcullis', version: '0.1.0' });

/** What the handshake learned about the server. */
export interface Handshake {
  readonly protocolVersion: string;
  readonly capabilities: ServerCapabilities;
  readonly serverInfo: Readonly<Record<string, unknown>> | undefined;
  readonly instructions: string | undefined;
}

export interface HandshakeOptions {
  negotiation: 'auto' | '2025';
  clientCapabilities: ClientCapabilities;
  timeoutMs: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Runs the handshake on a started peer; rejects with what went wrong (the link names it). */
export async function handshake(peer: RpcPeer, options: HandshakeOptions): Promise<Handshake> {
  if (options.negotiation === 'auto') {
    const modern = await probe(peer, options);
    if (modern !== undefined) return modern;
  }
  return initialize(peer, options);
}

async function initialize(peer: RpcPeer, options: HandshakeOptions): Promise<Handshake> {
  const result = await peer.request(
    'initialize',
    { protocolVersion: VERSIONS_2025[0], capabilities: options.clientCapabilities, clientInfo: CLIENT_INFO },
    { timeoutMs: options.timeoutMs },
  );
  const version = result.protocolVersion;
  if (typeof version !== 'string' || !VERSIONS_2025.includes(version)) {
    throw new UpstreamError('UPSTREAM_START_FAILED', peer.server, 'answered initialize with a protocol version the gateway does not speak');
  }
  peer.setProtocolVersion(version);
  await peer.notify('notifications/initialized', undefined);
  return {
    protocolVersion: version,
    capabilities: isObject(result.capabilities) ? (result.capabilities as ServerCapabilities) : {},
    serverInfo: isObject(result.serverInfo) ? result.serverInfo : undefined,
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
  };
}

/** The `server/discover` probe: the 2026 handshake, or undefined to fall back to `initialize`. */
async function probe(peer: RpcPeer, options: HandshakeOptions): Promise<Handshake | undefined> {
  const envelope = {
    [PROTOCOL_VERSION_META_KEY]: PROTOCOL_2026,
    [CLIENT_INFO_META_KEY]: CLIENT_INFO,
    [CLIENT_CAPABILITIES_META_KEY]: options.clientCapabilities,
  };
  let result: Record<string, unknown>;
  try {
    result = await peer.request('server/discover', { _meta: envelope }, { timeoutMs: options.timeoutMs });
  } catch (error) {
    if (probeUnknown(error)) return undefined;
    throw error;
  }
  const supported = result.supportedVersions;
  if (!Array.isArray(supported) || !supported.includes(PROTOCOL_2026) || !isObject(result.capabilities)) return undefined;
  peer.useEnvelope(envelope);
  peer.setProtocolVersion(PROTOCOL_2026);
  const meta = result._meta;
  const info = isObject(meta) ? meta[SERVER_INFO_META_KEY] : undefined;
  return {
    protocolVersion: PROTOCOL_2026,
    capabilities: result.capabilities as ServerCapabilities,
    serverInfo: isObject(info) && typeof info.name === 'string' && typeof info.version === 'string' ? info : undefined,
    instructions: typeof result.instructions === 'string' ? result.instructions : undefined,
  };
}

/**
 * True when the probe's failure shows a server that does not know `server/discover` (fall back),
 * false when the connection itself failed. A server that lists only other 2026-era revisions is
 * refused rather than spoken to in the 2025 revision it does not offer.
 */
function probeUnknown(error: unknown): boolean {
  if (error instanceof UpstreamRpcError) return !refusesEveryRevision(error.rpcCode, error.data);
  const status = httpStatusOf(error);
  if (status === undefined) return false;
  if (status === 401 || status === 403 || status >= 500) return false;
  return status >= 400;
}

function refusesEveryRevision(code: number, data: unknown): boolean {
  if (code !== (ProtocolErrorCode.UnsupportedProtocolVersion as number) || !isObject(data) || !Array.isArray(data.supported)) return false;
  const supported = data.supported.filter((version): version is string => typeof version === 'string');
  return supported.some((version) => version >= PROTOCOL_2026) && !supported.includes(PROTOCOL_2026);
}
