/**
 * Rebuilds a 2025-era session on a new owner: the client's stored `initialize` params are fed
 * into a fresh transport (created with the session's own id) as a synthetic `initialize` and
 * `notifications/initialized`, and their answers are discarded. The session's peer (inbound/client-peer.ts)
 * then holds the client's capabilities and version exactly as the first owner did (negotiation is
 * deterministic), and the transport accepts the client's session id from the next request on.
 */

/** The part of a session this needs (Session2025). */
export interface RebuildableSession {
  handle(request: Request, parsedBody?: unknown): Promise<Response>;
  readonly initialised: boolean;
}

/** How long the synthetic handshake may take (it touches no upstream). */
const REPLAY_TIMEOUT_MS = 10_000;

/** Any URL: the transport only reads the method, headers and body. */
const REPLAY_URL = 'http://127.0.0.1/portcullis-replay';

function post(body: unknown, sessionId?: string): Request {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (sessionId !== undefined) headers['mcp-session-id'] = sessionId;
  return new Request(REPLAY_URL, { method: 'POST', headers, body: JSON.stringify(body) });
}

async function drained(response: Response): Promise<number> {
  await response.body?.cancel().catch(() => undefined);
  return response.status;
}

/** Replays the handshake; true when the session came out initialised under `sessionId`. */
export async function replayInitialize(
  session: RebuildableSession,
  sessionId: string,
  params: Readonly<Record<string, unknown>>,
): Promise<boolean> {
  const handshake = async (): Promise<boolean> => {
    const init = { jsonrpc: '2.0', id: 'portcullis-failover-replay', method: 'initialize', params };
    const response = await session.handle(post(init), init);
    // The result is sent before the body is read; reading it is not needed, only releasing it.
    const status = response.status;
    if (status !== 200 || response.headers.get('mcp-session-id') !== sessionId) {
      await drained(response);
      return false;
    }
    await response.text().catch(() => undefined);
    const initialized = { jsonrpc: '2.0', method: 'notifications/initialized' };
    const accepted = await drained(await session.handle(post(initialized, sessionId), initialized));
    return accepted === 202 && session.initialised;
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), REPLAY_TIMEOUT_MS)));
  try {
    return await Promise.race([handshake(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
