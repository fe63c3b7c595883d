/**
 * A hostile (or merely generous) Streamable HTTP upstream: the real HTTP fixture behind a proxy
 * on 127.0.0.1 that answers some `tools/call`s of `echo` itself, with bodies as large as the test
 * asks, streamed with backpressure — so a gateway that reads them whole holds them whole.
 *
 * `echo` with text `big:<form>:<bytes>` is answered with a tools/call result whose text is
 * `<bytes>` long, as one JSON body (`json`), as one SSE event (`sse`), or as an HTTP 500 page of
 * that size (`error`). Everything else is forwarded to the fixture untouched. Each answer records
 * what was written and whether it was written to its end (a reset connection stops it early).
 */
import { createServer, type ServerResponse } from 'node:http';
import { forwardTo, listenOnLoopback } from './loopback-proxy.js';

export type BigForm = 'json' | 'sse' | 'error';

export interface BigAnswer {
  readonly form: BigForm;
  readonly planned: number;
  written: number;
  /** Set when the answer's connection closed: true when every byte was written. */
  finished?: boolean;
}

export interface OversizeUpstream {
  /** The server URL to configure (`…/mcp`). */
  readonly url: string;
  readonly answers: BigAnswer[];
  close(): Promise<void>;
}

const PIECE = 64 * 1024;

/** The text argument that asks for a big answer. */
export function bigText(form: BigForm, bytes: number): string {
  return `big:${form}:${bytes}`;
}

function parseBig(body: Buffer): { id: string | number; form: BigForm; bytes: number } | undefined {
  let message: { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: { text?: unknown } } };
  try {
    message = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (message.method !== 'tools/call' || message.params?.name !== 'echo') return undefined;
  const text = message.params.arguments?.text;
  const found = typeof text === 'string' ? /^big:(json|sse|error):(\d+)$/.exec(text) : null;
  const id = message.id;
  if (found === null || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  return { id, form: found[1] as BigForm, bytes: Number(found[2]) };
}

/** Writes `head`, `bytes` × "x" and `tail` to `res` with backpressure, recording progress in `answer`. */
function stream(res: ServerResponse, answer: BigAnswer, head: string, tail: string): void {
  res.on('close', () => (answer.finished = res.writableFinished));
  const piece = 'x'.repeat(PIECE);
  let left = answer.planned;
  res.write(head);
  const pump = (): void => {
    while (left > 0 && !res.destroyed) {
      const size = Math.min(PIECE, left);
      left -= size;
      answer.written += size;
      if (!res.write(size === PIECE ? piece : piece.slice(0, size))) return void res.once('drain', pump);
    }
    if (!res.destroyed) res.end(tail);
  };
  pump();
}

function answerBig(res: ServerResponse, big: { id: string | number; form: BigForm; bytes: number }, answers: BigAnswer[]): void {
  const answer: BigAnswer = { form: big.form, planned: big.bytes, written: 0 };
  answers.push(answer);
  const head = `{"jsonrpc":"2.0","id":${JSON.stringify(big.id)},"result":{"resultType":"complete","content":[{"type":"text","text":"`;
  const tail = '"}]}}';
  switch (big.form) {
    case 'json':
      res.writeHead(200, { 'content-type': 'application/json' });
      return stream(res, answer, head, tail);
    case 'sse':
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return stream(res, answer, `event: message\ndata: ${head}`, `${tail}\n\n`);
    case 'error':
      res.writeHead(500, { 'content-type': 'text/plain' });
      return stream(res, answer, 'upstream failure: ', '\n');
  }
}

export async function startOversizeUpstream(target: string): Promise<OversizeUpstream> {
  const upstream = new URL(target);
  const answers: BigAnswer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const big = req.method === 'POST' ? parseBig(body) : undefined;
      if (big !== undefined) return answerBig(res, big, answers);
      forwardTo(upstream, req, res, body);
    });
  });
  return { ...(await listenOnLoopback(server, upstream.pathname)), answers };
}
