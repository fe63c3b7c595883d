/**
 * A gateway with bearer principals `alice` and `bob` in front of real per-user upstreams
 * (per-user-upstream.ts), and the HTTP helpers of the `perUser` tests: 2025 sessions that
 * collect `tools/list_changed`, the caller's customisation list, the authenticate route, and the
 * count of tokens held (from `/metrics`, read as `ops`, the policy's one admin).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import type { GatewayConfig } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/load.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import { collectNotifications, connectClient, type ConnectedClient } from '../integration/harness/clients.js';
import { bearerPrincipals, type Principals } from '../integration/harness/principals.js';
import { httpServer } from '../integration/harness/upstreams.js';
import { within, type Cleanup } from '../integration/harness/wait.js';
import { capturingLogger } from '../session/redis-helpers.js';
import { startPerUserUpstream, type PerUserUpstream } from './per-user-upstream.js';

export type Item = Record<string, any>;

export interface World {
  upstream: PerUserUpstream;
  principals: Principals;
  gateway: RunningGateway;
  lines: Array<Record<string, unknown>>;
}

export interface WorldOptions {
  /** Top-level config beside `servers` (a `policy` is written as a file and named). */
  readonly extra?: Record<string, unknown>;
  /** The servers (default: `notes`, per-user, and `plain`, the same upstream without). */
  readonly servers?: (upstream: PerUserUpstream) => Record<string, unknown>;
  /** The policy file's content, if any. */
  readonly policy?: Record<string, unknown>;
  /** What a reload reads (the raw config; default: the file's). */
  readonly reloadWith?: () => Record<string, unknown>;
}

/** The default servers: `notes` takes each user's token, `plain` is the same upstream without. */
export function defaultServers(upstream: PerUserUpstream): Record<string, unknown> {
  return {
    notes: httpServer(upstream.url, { upstreamAuth: { kind: 'perUser' } }),
    plain: httpServer(upstream.url, { mode: 'optional' }),
  };
}

export async function perUserWorld(cleanup: Cleanup, options: WorldOptions = {}): Promise<World> {
  const upstream = await startPerUserUpstream();
  cleanup.add(() => upstream.close());
  const principals = bearerPrincipals('alice', 'bob', 'ops');
  const { logger, lines } = capturingLogger();
  const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-peruser-'));
  // `/metrics` is for the policy's admins: `ops` reads it, and is nobody the tests act as.
  const policy = { ...options.policy, admins: [...((options.policy?.admins as string[] | undefined) ?? []), 'ops'] };
  writeFileSync(path.join(dir, 'policy.json'), JSON.stringify(policy));
  const raw = (servers: Record<string, unknown>): Record<string, unknown> => ({
    listen: { host: '127.0.0.1', port: 0 },
    stateDir: path.join(dir, 'state'),
    auth: principals.auth,
    servers,
    policy: './policy.json',
    ...options.extra,
  });
  const parse = (config: Record<string, unknown>): Readonly<GatewayConfig> => parseConfig(config, { baseDir: dir });
  const config = parse(raw((options.servers ?? defaultServers)(upstream)));
  const reloadWith = options.reloadWith;
  const gateway = await startGateway({
    config,
    logger,
    env: { ...process.env, ...principals.env },
    ...(reloadWith === undefined ? {} : { reloadConfig: async () => parse(raw(reloadWith())) }),
  });
  cleanup.add(() => within(gateway.close(), 15_000, 'gateway close'));
  return { upstream, principals, gateway, lines };
}

export interface Session extends ConnectedClient {
  id: string;
  principal: string;
  listChanged: ReturnType<typeof collectNotifications>;
}

export async function userSession(cleanup: Cleanup, w: World, principal: string, url = w.gateway.url): Promise<Session> {
  let listChanged!: ReturnType<typeof collectNotifications>;
  const connected = await connectClient(cleanup, url, '2025', {
    headers: w.principals.headers(principal),
    setup: (client) => {
      listChanged = collectNotifications(client, 'notifications/tools/list_changed');
    },
  });
  return { ...connected, id: connected.transport.sessionId!, principal, listChanged };
}

export async function listOf(w: World, s: { principal: string; id: string }): Promise<Item[]> {
  const response = await fetch(`${w.gateway.url}/customizations`, { headers: { ...w.principals.headers(s.principal), 'mcp-session-id': s.id } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: Item[] }).items;
}

export function authenticate(w: World, as: { principal: string; id: string | undefined }, body: unknown): Promise<Response> {
  return fetch(`${w.gateway.url}/customizations/authenticate`, {
    method: 'POST',
    headers: { ...w.principals.headers(as.principal), 'content-type': 'application/json', ...(as.id === undefined ? {} : { 'mcp-session-id': as.id }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function heldTokens(w: World): Promise<number> {
  const response = await fetch(`${w.gateway.url.replace(/\/mcp$/, '')}/metrics`, { headers: w.principals.headers('ops') });
  const line = (await response.text()).split('\n').find((l) => l.startsWith('portcullis_upstream_user_credentials '));
  return Number(line!.split(' ')[1]);
}
