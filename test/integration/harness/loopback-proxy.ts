/**
 * The two halves every test proxy in front of a fixture repeats: listening on 127.0.0.1 (port 0)
 * with a close that also ends kept-alive connections, and passing one request through to the
 * upstream unchanged (its Host rewritten), cut when either side goes away.
 */
import { request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ListeningProxy {
  /** The proxy's origin followed by `pathname`. */
  url: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 on a free port; `pathname` is appended to the URL handed back. */
export async function listenOnLoopback(server: Server, pathname: string): Promise<ListeningProxy> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Sends `req` (its body already read into `body`) to `upstream` and pipes the answer to `res`. */
export function forwardTo(upstream: URL, req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  const forward = httpRequest(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: upstream.host } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  res.on('close', () => forward.destroy());
  forward.on('error', () => res.destroy());
  forward.end(body);
}
