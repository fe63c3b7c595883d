/**
 * Resources the gateway serves itself on an endpoint, beside its upstreams' (the customisation
 * list, `portcullis://customizations`). They are listed first in `resources/list`, read and
 * subscribed to without reaching any upstream, and each caller reads its own view of them: a
 * 2025 session through its enablement, a sessionless request through the workspace it names.
 */
import type { DownstreamSink } from '../rpc/sink.js';
import type { SessionEnablement } from './visibility.js';

/** One gateway resource as `resources/list` shows it (MCP `Resource`). */
export interface GatewayResource {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType: string;
}

/** Who reads: a session (its view, and the stream its updates go to), or a sessionless caller's workspace. */
export interface ResourceCaller {
  readonly session?: SessionEnablement;
  readonly workspace?: string;
  /** Where `notifications/resources/updated` go; absent: the caller cannot subscribe (no session). */
  readonly sink?: DownstreamSink;
}

/** The gateway's resources as one caller sees them. */
export interface CallerResources {
  readonly resources: readonly GatewayResource[];
  owns(uri: string): boolean;
  /** The `resources/read` result of `uri` (one of `resources`), this caller's view. */
  read(uri: string): Record<string, unknown>;
  /** Updates of `uri` reach the caller's sink until unsubscribed or closed; throws without a sink. */
  subscribe(uri: string): void;
  unsubscribe(uri: string): void;
  /** The caller went away: every subscription of it ends. Idempotent. */
  close(): void;
}

export interface GatewayResources {
  forCaller(caller: ResourceCaller): CallerResources;
}
