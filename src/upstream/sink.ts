/**
 * Where messages that an upstream originates go: the downstream client, and when possible the
 * one stream of the call that caused them. `upstream/` defines this seam so it never has to know
 * about inbound HTTP (dependency direction: inbound → routing → upstream).
 */
export interface RpcMessage {
  method: string;
  params?: Record<string, unknown>;
}

export interface DownstreamSink {
  /** A server→client request (sampling, elicitation, roots). Resolves with the client's result. */
  request(message: RpcMessage, signal?: AbortSignal): Promise<Record<string, unknown>>;
  /** A server→client notification (logging, progress, resource updates, list changes). */
  notify(message: RpcMessage): Promise<void>;
  /** True when the client side can receive server→client requests on this sink. */
  readonly canRequest: boolean;
}

/** Link-level events (not tied to a call) that owners of a link subscribe to. */
export type LinkEvent =
  | { kind: 'listChanged'; list: 'tools' | 'prompts' | 'resources' }
  | { kind: 'resourceUpdated'; params: Record<string, unknown> }
  /** `notifications/tasks/status`: its `taskId` is the upstream's, so only the task table can route it. */
  | { kind: 'taskStatus'; params: Record<string, unknown> }
  | { kind: 'closed'; reason: string };
