/**
 * The scopes a verified access token holds: `scope` as RFC 9068 §2.2.3 states it (one
 * space-separated string), or `scp` as some identity providers write it (Entra ID, Okta: an array
 * or a string).
 */
export function tokenScopes(payload: Readonly<Record<string, unknown>>): string[] {
  const { scope, scp } = payload;
  if (typeof scope === 'string') return scope.split(' ').filter((s) => s !== '');
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter((s) => s !== '');
  return [];
}
