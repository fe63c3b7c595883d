/**
 * Shared by the enablement tests: stdio servers running the whereami fixture with a marker
 * argument (so a test finds exactly its own child processes in /proc), and HTTP helpers for the
 * customisation list and its toggle route.
 */
import { randomUUID } from 'node:crypto';
import { listProcesses } from '../integration/harness/processes.js';
import { rawRequest, type RawResponse } from '../integration/harness/raw-http.js';
import { WHEREAMI } from './plugin-test-gateway.js';

export type Item = Record<string, any>;

/** A config stdio entry running whereami, tagged with a marker nobody else uses. */
export function markedServer(extra: Record<string, unknown> = {}): { entry: Record<string, unknown>; marker: string } {
  const marker = `enablement-${randomUUID()}`;
  return { entry: { transport: 'stdio', command: 'node', args: [WHEREAMI, marker], ...extra }, marker };
}

/** Pids of live processes carrying `marker` in their argv. */
export function pidsWith(marker: string): number[] {
  return listProcesses()
    .filter((p) => p.cmdline.includes(marker))
    .map((p) => p.pid);
}

export async function listOf(url: string, headers: Record<string, string> = {}, query = ''): Promise<Item[]> {
  const response = await rawRequest(`${url}/customizations${query}`, { method: 'GET', headers });
  if (response.status !== 200) throw new Error(`GET customizations answered ${response.status}: ${response.body}`);
  return (JSON.parse(response.body) as { items: Item[] }).items;
}

/** The item named `name`, at the top level or inside a plugin. */
export function find(items: readonly Item[], name: string): Item {
  for (const item of items) {
    if (item.name === name) return item;
    for (const child of item.children ?? []) if (child.name === name) return child;
  }
  throw new Error(`no item named ${name} in ${JSON.stringify(items.map((i) => i.name))}`);
}

export function toggle(url: string, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(`${url}/customizations/toggle`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Toggles and expects 200; returns the list it answered with. */
export async function toggleOk(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Item[]> {
  const response = await toggle(url, body, headers);
  if (response.status !== 200) throw new Error(`toggle answered ${response.status}: ${response.body}`);
  return (JSON.parse(response.body) as { items: Item[] }).items;
}
