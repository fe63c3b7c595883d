/**
 * The announced server (the Agent Host Protocol's `McpServerResult`): each endpoint's handshake
 * result carries `_meta["portcullis/server"] = { name, url }`, the endpoint's canonical URL, so a
 * host that reached the gateway some other way (a port forward, a discovery file) records the URL
 * it should use. The canonical base is the origin config `listen.publicUrl` names when set (a
 * reverse proxy in front), else the bound address, followed by the endpoint's path; the Ready line and /readyz show the same URL. No `headers`:
 * the gateway asks a client for none of its own (a credential is the client's, never announced).
 */
import type { AddressInfo } from 'node:net';

export const ANNOUNCED_SERVER_META = 'portcullis/server';

export interface CanonicalUrls {
  /** The aggregate endpoint's URL. */
  readonly aggregate: string;
  /** The aggregate URL without a trailing `/`: what `/servers/…`, `/agents/…` hang off. */
  readonly base: string;
  sideChannel(server: string): string;
  agent(name: string): string;
}

/** A name as one path segment: percent-encoded, except `:` (legal in a segment, and in agent names). */
function segment(name: string): string {
  return encodeURIComponent(name).replaceAll('%3A', ':');
}

export function canonicalUrls(listen: { readonly path: string; readonly publicUrl?: string | undefined }, address: AddressInfo): CanonicalUrls {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // `publicUrl` is an origin (config schema): the endpoint's path goes after it, as for OAuth resources.
  const origin = listen.publicUrl === undefined ? `http://${host}:${address.port}` : listen.publicUrl.replace(/\/$/, '');
  const aggregate = `${origin}${listen.path}`;
  const base = aggregate.endsWith('/') ? aggregate.slice(0, -1) : aggregate;
  return {
    aggregate,
    base,
    sideChannel: (server) => `${base}/servers/${segment(server)}`,
    agent: (name) => `${base}/agents/${segment(name)}`,
  };
}

export function announcedServer(name: string, url: string): Record<string, unknown> {
  return { [ANNOUNCED_SERVER_META]: { name, url } };
}
