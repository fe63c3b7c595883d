/**
 * Who may open the admin page and press its reload button: a pure check. With authentication on,
 * the principal must be one of `admin.principals` (an empty list admits nobody); with it off,
 * only a client on a loopback address — without auth the gateway cannot tell one caller from
 * another, and the page names servers, states and errors. The Host and Origin guards and the
 * authentication itself run before this (app.ts).
 */
import { isLoopbackAddress } from '../inbound/bind-check.js';

export interface AdminAccessInput {
  readonly authOn: boolean;
  readonly principal: string | undefined;
  /** The TCP peer's address, as the socket reports it. */
  readonly remoteAddress: string | undefined;
  readonly admins: ReadonlySet<string>;
}

export type AdminAccess = { ok: true } | { ok: false; message: string };

export function checkAdminAccess(input: AdminAccessInput): AdminAccess {
  if (input.authOn) {
    if (input.principal !== undefined && input.admins.has(input.principal)) return { ok: true };
    return { ok: false, message: 'the admin page is for the principals listed in admin.principals' };
  }
  if (input.remoteAddress !== undefined && isLoopbackAddress(input.remoteAddress)) return { ok: true };
  return { ok: false, message: 'without auth the admin page answers loopback clients only' };
}
