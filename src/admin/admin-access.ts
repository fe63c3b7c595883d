/**
 * Who is an admin: a pure check, and the guard every admin-only route shares (the admin page, its
 * status, chart library and reload, and `/metrics`). With authentication on, the principal must be
 * one of the policy's `admins` — the one list of admins, which also decides workspace and global
 * toggles (customizations/toggle-check.ts) and who sees every server on `/readyz` (an empty list
 * admits nobody). With it off, only a client on a loopback address: without auth the gateway
 * cannot tell one caller from another, and these routes name every server, hidden ones included,
 * with their states and errors. The Host and Origin guards and the authentication itself run
 * before this (app.ts).
 */
import type { Context } from 'hono';
import { errorResponse, GatewayError } from '../errors.js';
import { principalOf } from '../inbound/auth/auth-middleware.js';
import { isLoopbackAddress } from '../inbound/bind-check.js';

export interface AdminAccessInput {
  readonly authOn: boolean;
  readonly principal: string | undefined;
  /** The TCP peer's address, as the socket reports it. */
  readonly remoteAddress: string | undefined;
  readonly admins: ReadonlySet<string>;
  /** What is asked for, for the refusal's message ('the admin page', '/metrics'). */
  readonly what?: string;
}

export type AdminAccess = { ok: true } | { ok: false; message: string };

export function checkAdminAccess(input: AdminAccessInput): AdminAccess {
  const what = input.what ?? 'the admin page';
  if (input.authOn) {
    if (input.principal !== undefined && input.admins.has(input.principal)) return { ok: true };
    return { ok: false, message: `${what} is for the principals listed in the policy's admins` };
  }
  if (input.remoteAddress !== undefined && isLoopbackAddress(input.remoteAddress)) return { ok: true };
  return { ok: false, message: `without auth ${what} answers loopback clients only` };
}

/** The TCP peer's address of a request served by @hono/node-server. */
export function remoteAddressOf(c: Context): string | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  return (env as { incoming: { socket?: { remoteAddress?: string } } }).incoming.socket?.remoteAddress;
}

export interface AdminGuardOptions {
  readonly authOn: boolean;
  /** The policy's `admins`. */
  readonly admins: readonly string[];
}

/** A guard compiled once: undefined for an admin, else the 403 `ADMIN_REFUSED` to answer. */
export function adminGuard(options: AdminGuardOptions): (c: Context, what?: string) => Response | undefined {
  const admins: ReadonlySet<string> = new Set(options.admins);
  return function adminRefusal(c, what) {
    const access = checkAdminAccess({ authOn: options.authOn, principal: principalOf(c), remoteAddress: remoteAddressOf(c), admins, ...(what === undefined ? {} : { what }) });
    return access.ok ? undefined : errorResponse(new GatewayError('ADMIN_REFUSED', access.message));
  };
}
