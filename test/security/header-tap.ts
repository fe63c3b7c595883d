/**
 * A transparent HTTP pass-through on 127.0.0.1 that records the request line and the raw header
 * lines of every request it forwards, so a test can see exactly which headers the gateway sent an
 * HTTP upstream (the harness's recording proxy records JSON-RPC bodies, not headers). Streams
 * (SSE) are piped as they come; a hang-up on either side ends the other.
 */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TappedRequest {
  method: string;
  path: string;
  /** Name/value pairs exactly as received, repeats kept, names lower-cased. */
  headers: Array<[string, string]>;
}

export interface HeaderTap {
  /** `target`'s URL with this tap's origin. */
  readonly url: string;
  readonly requests: TappedRequest[];
  close(): Promise<void>;
}

/**
 * Starts a tap in front of `target` (an `http://127.0.0.1:…` URL). `admit`, when given, judges
 * each request's headers first: a status it answers is sent instead of forwarding (an upstream
 * that demands credentials).
 */
export async function startHeaderTap(target: string, admit?: (headers: Array<[string, string]>) => Promise<number | undefined>): Promise<HeaderTap> {
  const upstream = new URL(target);
  if (upstream.hostname !== '127.0.0.1') throw new Error('the header tap only forwards to 127.0.0.1');
  const requests: TappedRequest[] = [];
  const server = createServer((req, res) => {
    const headers: Array<[string, string]> = [];
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      headers.push([(req.rawHeaders[i] ?? '').toLowerCase(), req.rawHeaders[i + 1] ?? '']);
    }
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers });
    void (admit?.(headers) ?? Promise.resolve(undefined)).then((refusal) => {
      if (refusal !== undefined) {
        req.resume();
        res.writeHead(refusal, { 'www-authenticate': 'Bearer error="invalid_token"', 'content-type': 'application/json' }).end('{}');
        return;
      }
      pass();
    });
    const pass = () => {
    const forward = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    res.on('close', () => forward.destroy());
    req.pipe(forward);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
