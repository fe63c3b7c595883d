/**
 * The fast read of an upstream's answer (src/upstream/streamable-http.ts): a 2xx JSON body
 * sent without content coding, read whole with plain listeners up to the message cap; anything
 * else is left untouched for `answerAsResponse` (dispatch-hop.ts).
 */
import type { Readable } from 'node:stream';
import type { BodyLimits } from './bounded-body.js';
import { headerValue, messageTooLarge, type HopAnswer } from './dispatch-hop.js';
import { isJsonContentType } from './media-type.js';

/**
 * The body of a 2xx JSON answer sent without content coding, read whole up to
 * `limits.maxMessageBytes` (over it: `UPSTREAM_MESSAGE_TOO_LARGE`, the connection reset); or
 * `undefined`, body untouched, for any other answer (the caller builds a `Response` of it).
 */
export async function readJsonAnswer(answer: HopAnswer, server: string, limits: BodyLimits, signal: AbortSignal | undefined): Promise<Buffer | undefined> {
  const { statusCode, headers, body } = answer;
  if (statusCode < 200 || statusCode > 299 || statusCode === 202 || statusCode === 204 || statusCode === 205) return undefined;
  const coding = headerValue(headers, 'content-encoding');
  if ((coding !== undefined && coding !== '' && coding.toLowerCase() !== 'identity') || !isJsonContentType(headerValue(headers, 'content-type') ?? null)) return undefined;
  if (Number(headerValue(headers, 'content-length') ?? 0) > limits.maxMessageBytes) {
    body.destroy();
    throw messageTooLarge(server, limits.maxMessageBytes);
  }
  const bytes = await readAllFast(body, limits.maxMessageBytes, signal);
  if (bytes === undefined) {
    body.destroy();
    throw messageTooLarge(server, limits.maxMessageBytes);
  }
  return bytes;
}

const ignore = (): void => undefined;

/** `readAll` with plain listeners (no async iterator per call): the whole body or `undefined` past `max`. */
function readAllFast(body: Readable, max: number, signal: AbortSignal | undefined): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const done = (): void => {
      body.off('data', onData);
      body.off('end', onEnd);
      body.off('error', onError);
      // An abort after the last byte still destroys the body with an error: nobody reads it now.
      body.on('error', ignore);
    };
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > max) {
        done();
        body.destroy();
        resolve(undefined);
      } else chunks.push(chunk);
    };
    const onEnd = (): void => {
      done();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes));
    };
    const onError = (error: Error): void => {
      done();
      reject(signal?.aborted ? signal.reason : new TypeError('terminated', { cause: error }));
    };
    body.on('data', onData);
    body.on('end', onEnd);
    body.on('error', onError);
  });
}
