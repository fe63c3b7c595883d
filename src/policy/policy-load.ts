/**
 * Loading a policy: the embedded default, a shipped policy by name (`"strict"`), or a policy file
 * by path (relative to the gateway config that names it). Parsed once with the strict schema and
 * frozen. Loading happens at boot only, so it reads synchronously.
 *
 * Problems are returned, not thrown, so that the config loader can report them together with
 * every other problem; they name the policy field and never echo a file path or a value.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { policySchema, type Policy } from './policy-schema.js';

/** Policies shipped in the package's `policies/` directory, usable by name. */
export const SHIPPED_POLICY_NAMES: readonly string[] = Object.freeze(['default', 'strict']);

/** A frozen policy, or every problem found (each names the policy field, never a value). */
export type PolicyLoadResult = { ok: true; policy: Readonly<Policy> } | { ok: false; problems: string[] };

const SHIPPED_NAME = /^[a-z][a-z0-9-]*$/;

function freezeDeep<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) freezeDeep(child);
  }
  return value;
}

function issuePath(path: readonly PropertyKey[]): string {
  return ['policy', ...path.map(String)].join('.');
}

function schemaProblems(error: z.ZodError): string[] {
  // zod 4 messages state the expectation, never the received value.
  return error.issues.map((issue) => `${issuePath(issue.path)}: ${issue.message}`);
}

/** Parses an already JSON-decoded policy. */
export function parsePolicy(raw: unknown): PolicyLoadResult {
  const parsed = policySchema.safeParse(raw);
  if (!parsed.success) return { ok: false, problems: schemaProblems(parsed.error) };
  return { ok: true, policy: freezeDeep(parsed.data) };
}

/**
 * The policy used when a config names none (and for `"default"`): the schema's defaults, which a
 * test holds equal to `policies/default.json`. Built in, so the gateway is safe without any file.
 */
export const EMBEDDED_DEFAULT_POLICY: Readonly<Policy> = freezeDeep(policySchema.parse({}));

/**
 * Where a shipped policy lives: `policies/NAME.json` at the package root, found by walking up from
 * this module (it runs from `src/policy` under vitest and from `dist/src/policy` when built).
 */
export function shippedPolicyPath(name: string): string | undefined {
  if (!SHIPPED_POLICY_NAMES.includes(name)) return undefined;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 5; level += 1) {
    const candidate = join(dir, 'policies', `${name}.json`);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}

function readPolicyFile(path: string): PolicyLoadResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    return { ok: false, problems: [`policy: cannot read the policy file (${code})`] };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ok: false, problems: ['policy: the policy file is not valid JSON'] };
  }
  return parsePolicy(raw);
}

/**
 * Loads the policy a config names: `undefined` or `"default"` → the embedded default; another
 * shipped name → that file from the package; anything ending in `.json` → a file, resolved
 * against `baseDir` (the config file's directory).
 */
export function loadPolicy(ref: string | undefined, baseDir: string): PolicyLoadResult {
  if (ref === undefined || ref === 'default') return { ok: true, policy: EMBEDDED_DEFAULT_POLICY };
  if (SHIPPED_NAME.test(ref)) {
    const path = shippedPolicyPath(ref);
    if (path !== undefined) return readPolicyFile(path);
    if (SHIPPED_POLICY_NAMES.includes(ref)) {
      return { ok: false, problems: ['policy: the shipped policy file is missing from this installation (policies/)'] };
    }
    const names = SHIPPED_POLICY_NAMES.map((name) => `"${name}"`).join(', ');
    return { ok: false, problems: [`policy: not a shipped policy (${names}); a policy file path must end in ".json"`] };
  }
  if (!ref.toLowerCase().endsWith('.json')) {
    return { ok: false, problems: ['policy: must name a shipped policy or a path to a ".json" policy file'] };
  }
  return readPolicyFile(resolve(baseDir, ref));
}
