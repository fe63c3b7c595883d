/**
 * The `WWW-Authenticate` challenges of an OAuth resource server (RFC 6750 §3, RFC 9728 §5.1, MCP
 * authorization "Protected Resource Metadata Discovery" and "Scope Selection Strategy"): every
 * challenge names the resource's metadata URL so a client can find the authorization server, and
 * the scopes to request.
 */

export type ChallengeError = 'invalid_request' | 'invalid_token' | 'insufficient_scope';

/** A quoted-string parameter value (RFC 9110 §5.6.4); our values never hold `"` or `\`. */
function quoted(value: string): string {
  return `"${value.replace(/["\\]/g, '')}"`;
}

export function oauthChallenge(metadataUrl: string, scopes: readonly string[], error?: ChallengeError): string {
  const params: string[] = [];
  if (error !== undefined) params.push(`error=${quoted(error)}`);
  params.push(`resource_metadata=${quoted(metadataUrl)}`);
  if (scopes.length > 0) params.push(`scope=${quoted(scopes.join(' '))}`);
  return `Bearer ${params.join(', ')}`;
}
