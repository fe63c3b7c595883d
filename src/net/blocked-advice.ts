/**
 * The one phrasing of an egress refusal for an operator: what the URL led to and the setting
 * that allows it, when one would. Used at run time (a failed start) and by `portcullis check`.
 */
import { PRIVATE_NETWORK_OFF } from './connect-decision.js';

/** `refusal` is a refusal's message (`connection to a loopback address refused (…)`), never a host. */
export function blockedAdvice(server: string, refusal: string): string {
  const inner = refusal.replace(/^upstream "[^"]*": /, '');
  const what = inner.endsWith(PRIVATE_NETWORK_OFF) ? /^connection to (.+) refused$/.exec(inner.slice(0, -PRIVATE_NETWORK_OFF.length).trim())?.[1] : undefined;
  if (what === undefined) return `blocked by the egress guard: ${inner}`;
  const leads = what === 'a localhost name' ? 'its URL names localhost' : `its URL resolves to ${what}`;
  return `blocked: ${leads}, and the egress guard refuses loopback and private addresses; set "allowPrivateNetwork": true on servers.${server} if that is intended`;
}
