/**
 * Who may see and use what: the policy's `access` rules, evaluated per authenticated caller.
 *
 * A rule names whom it matches — principal name globs, token claims (`groups: ["eng"]`: the
 * claim, a string or an array of strings, holds one of the values), scopes the token must all
 * hold; a rule with none matches everyone, the unauthenticated caller included — and what it
 * covers: `servers` (names or globs) and `tools` (globs, as `deniedTools` writes them). Its
 * `effect` is `allow` or `deny`. For each item the first rule that matches the caller and covers
 * the item decides; no rule: `default`.
 *
 * Items are of two kinds. A tool is covered by a rule whose `servers` (if any) include its server
 * and whose `tools` (if any) match it. A server's other parts — prompts, resources, templates,
 * completions — are covered by a rule whose `servers` include it (or that names no servers) and
 * that names no `tools`. So `default: "deny"` with one rule allowing `tools: ["github__search"]`
 * shows that one tool and nothing else of github.
 *
 * Matching on `tools`: a `deny` glob is tried on every name the tool goes by (exposed, canonical
 * `server__tool`, sanitised canonical, bare — as `deniedTools`), an `allow` glob only on the
 * exposed and canonical names, so neither direction is looser than the operator wrote.
 *
 * What a caller may see depends only on which rules match it, so callers matching the same rules
 * share one profile (its `key`): list caches are keyed by it and never shared across profiles.
 */
import { createHash } from 'node:crypto';
import { sanitizeName } from '../naming/names.js';
import { canonicalToolName } from './denied-tools.js';
import { compileExactGlob, compileGlob, type Glob } from './tool-filter.js';

export type AccessEffect = 'allow' | 'deny';

export interface AccessRule {
  /** Names the rule in audit lines and diagnostics. */
  name?: string | undefined;
  principals?: readonly string[] | undefined;
  claims?: Readonly<Record<string, readonly string[]>> | undefined;
  scopes?: readonly string[] | undefined;
  effect: AccessEffect;
  servers?: readonly string[] | undefined;
  tools?: readonly string[] | undefined;
}

export interface AccessPolicy {
  default: AccessEffect;
  rules: readonly AccessRule[];
}

/** Who is asking, as authentication established it. */
export interface CallerIdentity {
  principal: string | undefined;
  claims?: Readonly<Record<string, unknown>> | undefined;
  scopes?: readonly string[] | undefined;
}

export interface AccessDecision {
  allowed: boolean;
  /** The rule that decided (its name, or `rules[i]`), or `default`. */
  rule: string;
}

/** What one caller may see and use. */
export interface AccessProfile {
  /** Equal for callers that match the same rules: the key of every list cache built for it. */
  readonly key: string;
  /** True when nothing is hidden from this caller (no rule matched and the default allows). */
  readonly unrestricted: boolean;
  tool(server: string, name: string, exposed: string): AccessDecision;
  /** A server's prompts, resources, templates and completions. */
  serverParts(server: string): AccessDecision;
}

export interface CompiledAccess {
  profileFor(identity: CallerIdentity): AccessProfile;
  /**
   * The profile whose `key` is `key`, or undefined when this policy did not make it (another
   * policy's, or not a key): how a peer replica that saw the caller's token tells this one which
   * rules it matched (cluster/principal-proof.ts). Replicas running the same rules agree on keys.
   */
  profileOfKey(key: string): AccessProfile | undefined;
}

interface CompiledRule {
  label: string;
  effect: AccessEffect;
  principals: Glob[] | undefined;
  claims: Array<[string, ReadonlySet<string>]>;
  scopes: readonly string[];
  servers: Glob[] | undefined;
  tools: Glob[] | undefined;
}

function compileRule(rule: AccessRule, index: number): CompiledRule {
  return {
    label: rule.name ?? `rules[${index}]`,
    effect: rule.effect,
    // Principal names are identities: matched exactly, case included (`Kate` is not `kate`, nor
    // is a name whose Unicode lower case happens to fold onto another).
    principals: rule.principals?.map(compileExactGlob),
    claims: Object.entries(rule.claims ?? {}).map(([claim, values]) => [claim, new Set(values)]),
    scopes: rule.scopes ?? [],
    servers: rule.servers?.map((pattern) => compileGlob(pattern)),
    tools: rule.tools?.map((pattern) => compileGlob(pattern)),
  };
}

function claimHolds(value: unknown, wanted: ReadonlySet<string>): boolean {
  if (typeof value === 'string') return wanted.has(value);
  return Array.isArray(value) && value.some((v) => typeof v === 'string' && wanted.has(v));
}

function matches(rule: CompiledRule, identity: CallerIdentity): boolean {
  const { principal, claims, scopes } = identity;
  if (rule.principals !== undefined && (principal === undefined || !rule.principals.some((g) => g.test(principal)))) return false;
  for (const [claim, wanted] of rule.claims) if (!claimHolds(claims?.[claim], wanted)) return false;
  return rule.scopes.every((scope) => scopes?.includes(scope) === true);
}

function coversServer(rule: CompiledRule, server: string): boolean {
  return rule.servers === undefined || rule.servers.some((g) => g.test(server));
}

function coversTool(rule: CompiledRule, server: string, name: string, exposed: string): boolean {
  if (!coversServer(rule, server)) return false;
  if (rule.tools === undefined) return true;
  const canonical = canonicalToolName(server, name);
  const names = rule.effect === 'deny' ? [exposed, canonical, sanitizeName(canonical), name] : [exposed, canonical];
  return rule.tools.some((g) => names.some((n) => g.test(n)));
}

const PROFILE_CACHE_MAX = 1024;

export function compileAccessPolicy(policy: AccessPolicy): CompiledAccess {
  const rules = policy.rules.map(compileRule);
  // Keys name the rules by index: the fingerprint keeps another policy's indices from meaning these rules.
  const fingerprint = createHash('sha256').update(JSON.stringify(policy)).digest('base64url').slice(0, 12);
  const fallback: AccessDecision = { allowed: policy.default === 'allow', rule: 'default' };
  const profiles = new Map<string, AccessProfile>();

  function profileOf(matched: readonly CompiledRule[], key: string): AccessProfile {
    const decide = (covers: (rule: CompiledRule) => boolean): AccessDecision => {
      for (const rule of matched) if (covers(rule)) return { allowed: rule.effect === 'allow', rule: rule.label };
      return fallback;
    };
    return {
      key,
      unrestricted: matched.length === 0 && fallback.allowed,
      tool: (server, name, exposed) => decide((rule) => coversTool(rule, server, name, exposed)),
      serverParts: (server) => decide((rule) => rule.tools === undefined && coversServer(rule, server)),
    };
  }

  const profileOfIndices = (indices: readonly number[]): AccessProfile => {
    const key = `access:${fingerprint}:${indices.join(',')}`;
    let profile = profiles.get(key);
    if (profile === undefined) {
      profile = profileOf(
        indices.map((i) => rules[i]!),
        key,
      );
      // Bounded: at most one profile per distinct set of matching rules seen recently.
      if (profiles.size >= PROFILE_CACHE_MAX) profiles.delete(profiles.keys().next().value as string);
      profiles.set(key, profile);
    }
    return profile;
  };

  return {
    profileFor(identity) {
      const indices: number[] = [];
      rules.forEach((rule, index) => {
        if (matches(rule, identity)) indices.push(index);
      });
      return profileOfIndices(indices);
    },
    profileOfKey(key) {
      const prefix = `access:${fingerprint}:`;
      if (!key.startsWith(prefix) || key.length > prefix.length + 8 * rules.length) return undefined;
      const rest = key.slice(prefix.length);
      const indices = rest === '' ? [] : rest.split(',').map((part) => (/^(0|[1-9]\d*)$/.test(part) ? Number(part) : Number.NaN));
      // Strictly ascending indices of existing rules: exactly what profileFor writes.
      if (!indices.every((index, at) => Number.isInteger(index) && index < rules.length && (at === 0 || index > indices[at - 1]!))) return undefined;
      return profileOfIndices(indices);
    },
  };
}

/** True when nothing is hidden from this caller (no profile: no access rules apply to it). */
export function seesAll(access: AccessProfile | undefined): access is undefined | (AccessProfile & { readonly unrestricted: true }) {
  return access === undefined || access.unrestricted;
}

/**
 * True when the caller's profile shows `server` as a server: its non-tool parts (`serverParts`),
 * as every listing of servers judges it — one of which the rules let it use single tools only is
 * not named. No profile: shown.
 */
export function showsServer(access: AccessProfile | undefined, server: string): boolean {
  return access === undefined || access.serverParts(server).allowed;
}

/** True when the rules can hide nothing from anyone (no rule, `default: "allow"`): nothing to evaluate. */
export function hidesNothing(policy: AccessPolicy): boolean {
  return policy.rules.length === 0 && policy.default === 'allow';
}
