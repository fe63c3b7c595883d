/**
 * `transport: "auto"`: what clients such as Cursor do with a bare URL. Each connection tries
 * Streamable HTTP first; when the URL answers that first POST with 404 or 405 (it is no Streamable
 * HTTP endpoint: MCP 2025-11-25, Transports, "Backwards Compatibility") and the policy allows
 * HTTP+SSE upstreams (`legacySse.upstream`), it opens HTTP+SSE on the same URL instead and sends
 * the message again there. The choice is made on the connection's first message, once, and logged
 * (at info when it differs from the server's last choice, else at debug).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { httpStatusOf } from '../errors.js';
import type { Logger } from '../observability/logger.js';
import type { Wire, WireSendOptions } from './peer.js';

/** The last transport each server's `auto` connections chose (by server name). */
const lastChoice = new Map<string, 'streamableHttp' | 'sse'>();
/** Servers remembered at most: names come from config, but a reload may add many over a run. */
const MAX_REMEMBERED = 1_024;

export interface AutoWireOptions {
  server: string;
  http: Wire;
  /** Opens the HTTP+SSE wire; absent when the policy does not allow HTTP+SSE upstreams. */
  sse: (() => Wire) | undefined;
  logger: Logger;
}

export class AutoWire implements Wire {
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  private readonly options: AutoWireOptions;
  private current: Wire;
  private settled = false;
  private protocolVersion: string | undefined;

  constructor(options: AutoWireOptions) {
    this.options = options;
    this.current = options.http;
  }

  get hasPerRequestStream(): boolean {
    return this.current.hasPerRequestStream === true;
  }

  async start(): Promise<void> {
    this.attach(this.current);
    await this.current.start();
  }

  async send(message: JSONRPCMessage, options?: WireSendOptions): Promise<void> {
    if (this.settled) return this.current.send(message, options);
    try {
      await this.current.send(message, options);
    } catch (error) {
      const status = httpStatusOf(error);
      if (this.options.sse === undefined || (status !== 404 && status !== 405)) throw error;
      const http = this.current;
      http.onclose = undefined;
      await http.close().catch(() => undefined);
      this.current = this.options.sse();
      this.attach(this.current);
      await this.current.start();
      if (this.protocolVersion !== undefined) this.current.setProtocolVersion?.(this.protocolVersion);
      this.settle('sse');
      return this.current.send(message, options);
    }
    this.settle('streamableHttp');
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    this.current.setProtocolVersion?.(version);
  }

  close(): Promise<void> {
    return this.current.close();
  }

  private attach(wire: Wire): void {
    wire.onmessage = (message) => this.onmessage?.(message);
    wire.onclose = () => this.onclose?.();
    wire.onerror = (error) => this.onerror?.(error);
  }

  private settle(transport: 'streamableHttp' | 'sse'): void {
    this.settled = true;
    const { server, logger } = this.options;
    const changed = lastChoice.get(server) !== transport;
    if (changed && lastChoice.size >= MAX_REMEMBERED && !lastChoice.has(server)) lastChoice.delete(lastChoice.keys().next().value!);
    lastChoice.set(server, transport);
    if (changed) logger.info({ server, transport }, `upstream "auto" transport chose ${transport === 'sse' ? 'HTTP+SSE' : 'Streamable HTTP'}`);
    else logger.debug({ server, transport }, 'upstream "auto" transport chosen');
  }
}
