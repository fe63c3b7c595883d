/**
 * A real OAuth token endpoint on 127.0.0.1 for the credential tests: it records each request's
 * form in arrival order, authenticates the client (`client_secret_basic` with `client` and
 * {@link SECRET}) and answers what the test sets — by default one RFC 8693 exchanged token per
 * request, named after its subject token and its request number. Requests wait for `hold`.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ACCESS_TOKEN_TYPE } from '../../../src/upstream/credentials/token-exchange.js';

export const SECRET = 'exchange-client-secret';

export type Answer = (form: URLSearchParams, n: number) => { status: number; body: Record<string, unknown> };

export const exchanged: Answer = (form, n) => ({
  status: 200,
  body: { access_token: `exchanged-${form.get('subject_token')}-${n}`, token_type: 'Bearer', expires_in: 600, issued_token_type: ACCESS_TOKEN_TYPE },
});

export interface TokenEndpoint {
  readonly url: string;
  /** Each request's form, in arrival order. */
  readonly requests: URLSearchParams[];
  answer: Answer;
  /** Requests are answered only once this settles (one exchange however many wait). */
  hold: Promise<void>;
  /** Forgets the requests, answers {@link exchanged}, holds nothing. */
  reset(): void;
  close(): Promise<void>;
}

async function read(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

export async function startTokenEndpoint(): Promise<TokenEndpoint> {
  const requests: URLSearchParams[] = [];
  const basic = `Basic ${Buffer.from(`client:${SECRET}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    void read(req).then(async (text) => {
      const form = new URLSearchParams(text);
      requests.push(form);
      const n = requests.length;
      await endpoint.hold;
      const { status, body } = req.headers.authorization === basic ? endpoint.answer(form, n) : { status: 401, body: { error: 'invalid_client' } };
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint: TokenEndpoint = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`,
    requests,
    answer: exchanged,
    hold: Promise.resolve(),
    reset() {
      requests.length = 0;
      endpoint.answer = exchanged;
      endpoint.hold = Promise.resolve();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return endpoint;
}
