/**
 * What an HTTP upstream's refusal asks for: the `WWW-Authenticate` challenges of a 401 or 403
 * (RFC 9110 §11.6.1), read for the one that names protected resource metadata
 * (`resource_metadata`, RFC 9728 §5.1), with its `error` (RFC 6750 §3.1) and `scope`. MCP's
 * authorization (2025-11-25, "Authorization Server Discovery") has servers answer exactly so.
 *
 * Pure and bounded: a header over 8 KiB is not read, at most 32 challenges and 32 scopes are
 * kept, and nothing of it is echoed into messages (the caller reports a reason, never the text).
 */

/** Why the upstream refused, in the customisation list's words. */
export type AuthReason = 'required' | 'expired' | 'insufficientScope';

export interface AuthChallenge {
  readonly reason: AuthReason;
  /** Absolute URL of the protected resource metadata document the challenge names. */
  readonly resourceMetadata: string;
  /** The scopes the challenge says are needed (its `scope`), when it names any. */
  readonly scopes?: readonly string[];
}

const MAX_HEADER_CHARS = 8 * 1024;
const MAX_CHALLENGES = 32;
const MAX_SCOPES = 32;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+/;
const TOKEN68 = /^[A-Za-z0-9._~+/-]+=*/;
const AUTH_PARAM = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+[ \t]*=[ \t]*[^=\s,]/;
/** RFC 6749 §3.3 scope-token. */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/;

interface Challenge {
  readonly scheme: string;
  readonly params: ReadonlyMap<string, string>;
}

/** A quoted-string at the start of `text` (RFC 9110 §5.6.4): its value and length, or undefined. */
function quoted(text: string): { value: string; length: number } | undefined {
  let value = '';
  for (let i = 1; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') return { value, length: i + 1 };
    if (ch === '\\') {
      i++;
      if (i >= text.length) return undefined;
      value += text[i]!;
    } else value += ch;
  }
  return undefined;
}

/** Every challenge of a `WWW-Authenticate` value; `[]` when it cannot be read. */
export function parseChallenges(header: string): Challenge[] {
  if (header.length > MAX_HEADER_CHARS) return [];
  const challenges: Array<{ scheme: string; params: Map<string, string> }> = [];
  let rest = header;
  const skip = (pattern: RegExp) => {
    rest = rest.replace(pattern, '');
  };
  while (challenges.length <= MAX_CHALLENGES) {
    skip(/^[\s,]+/);
    if (rest === '') return challenges;
    const scheme = TOKEN.exec(rest)?.[0];
    // A parameter only follows a scheme; anything else is not a challenge list we can read.
    if (scheme === undefined) return [];
    rest = rest.slice(scheme.length);
    const current = { scheme: scheme.toLowerCase(), params: new Map<string, string>() };
    challenges.push(current);
    skip(/^[ \t]+/);
    // token68 form (`Basic abc==`): nothing to read. An auth-param is `name = value`, a value
    // never starting with `=` or a separator, which is what tells the two apart.
    const token68 = TOKEN68.exec(rest)?.[0];
    if (token68 !== undefined && !AUTH_PARAM.test(rest) && /^[ \t]*(,|$)/.test(rest.slice(token68.length))) {
      rest = rest.slice(token68.length);
      continue;
    }
    for (;;) {
      const name = TOKEN.exec(rest)?.[0];
      if (name === undefined) break;
      const afterName = rest.slice(name.length).replace(/^[ \t]*/, '');
      // A token not followed by `=` starts the next challenge.
      if (!afterName.startsWith('=')) break;
      rest = afterName.slice(1).replace(/^[ \t]*/, '');
      let value: string;
      if (rest.startsWith('"')) {
        const q = quoted(rest);
        if (q === undefined) return [];
        value = q.value;
        rest = rest.slice(q.length);
      } else {
        const bare = TOKEN.exec(rest)?.[0];
        if (bare === undefined) return [];
        value = bare;
        rest = rest.slice(bare.length);
      }
      const key = name.toLowerCase();
      if (!current.params.has(key)) current.params.set(key, value);
      skip(/^[ \t]*/);
      if (!rest.startsWith(',')) break;
      rest = rest.slice(1).replace(/^[\s,]*/, '');
    }
  }
  return challenges;
}

/** The scopes of a `scope` parameter: space-separated scope-tokens, deduplicated, bounded. */
function scopesOf(scope: string | undefined): string[] | undefined {
  if (scope === undefined) return undefined;
  const scopes = [...new Set(scope.split(' ').filter((s) => SCOPE_TOKEN.test(s)))].slice(0, MAX_SCOPES);
  return scopes.length === 0 ? undefined : scopes;
}

/** An absolute https URL, or http to a loopback host; no credentials, no fragment. */
function metadataUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') return undefined;
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) return undefined;
  return url.href;
}

/**
 * The authorization an upstream's refusal asks for, or undefined when it is not such a refusal:
 * a 401, or a 403 whose error is `insufficient_scope` (RFC 6750 §3.1), with a challenge naming a
 * usable `resource_metadata` URL. A 401 whose error is `invalid_token` means the credential sent
 * was refused (expired or revoked): `expired`; any other 401 `required`.
 */
export function authChallengeOf(status: number, header: string | null): AuthChallenge | undefined {
  if ((status !== 401 && status !== 403) || header === null) return undefined;
  for (const challenge of parseChallenges(header)) {
    const raw = challenge.params.get('resource_metadata');
    const resourceMetadata = raw === undefined ? undefined : metadataUrl(raw);
    if (resourceMetadata === undefined) continue;
    const error = challenge.params.get('error');
    let reason: AuthReason;
    if (status === 403) {
      if (error !== 'insufficient_scope') continue;
      reason = 'insufficientScope';
    } else reason = error === 'invalid_token' ? 'expired' : 'required';
    const scopes = scopesOf(challenge.params.get('scope'));
    return { reason, resourceMetadata, ...(scopes === undefined ? {} : { scopes }) };
  }
  return undefined;
}
