/**
 * A `Response` whose body was read in full before it was built: `text()`, `json()` and
 * `arrayBuffer()` answer from the bytes held, with no web stream in between. An upstream's JSON
 * answer is read whole by the SDK anyway; a streamed `Response` would cost a `ReadableStream`
 * per call (Node 20 makes each one transferable: measurable per call in the profile). Reading
 * `body` still works, with a stream built then, on demand. One read, as for any `Response`.
 */
export class BufferedResponse extends Response {
  readonly #bytes: Buffer;
  #used = false;
  #stream: ReadableStream<Uint8Array> | null = null;

  /** `headers` is used as it is (not copied, as `Response` would copy it); the caller hands it over. */
  constructor(bytes: Buffer, init: { status: number; statusText: string; headers: Headers }) {
    super(null, { status: init.status, statusText: init.statusText });
    this.#bytes = bytes;
    // `body`, `bodyUsed` and `headers` are accessors of Response.prototype; these shadow them per instance.
    Object.defineProperty(this, 'body', { get: () => this.#bodyStream(), configurable: true });
    Object.defineProperty(this, 'bodyUsed', { get: () => this.#used, configurable: true });
    Object.defineProperty(this, 'headers', { value: init.headers, configurable: true });
  }

  override async text(): Promise<string> {
    return this.#take().toString('utf8');
  }

  override async json(): Promise<unknown> {
    return JSON.parse(this.#take().toString('utf8'));
  }

  override async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  #take(): Buffer {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#bytes;
  }

  #bodyStream(): ReadableStream<Uint8Array> {
    if (this.#stream === null) {
      // Read already (text/json): a disturbed body, as a Response has; the bytes are not sent twice.
      const bytes = this.#used ? undefined : this.#take();
      this.#stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (bytes === undefined) controller.error(new TypeError('Body is unusable: Body has already been read'));
          else {
            if (bytes.byteLength > 0) controller.enqueue(new Uint8Array(bytes));
            controller.close();
          }
        },
      });
    }
    return this.#stream;
  }
}
