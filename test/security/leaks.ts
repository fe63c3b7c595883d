/**
 * Known, unique secret values for the secrets suite, and the one check that says whether a text
 * carries any of them. A secret counts as leaked when the text holds it raw, in its JSON-escaped
 * form (how it sits inside a log line), JSON-escaped twice (an upstream's JSON error quoted in a
 * log line's message), percent-encoded, or any 12-character fragment of its random part (a
 * truncated line, a prefix "for debugging": redaction by whole value misses those).
 */
import { fileURLToPath } from 'node:url';
import { seededRandom } from '../setup/random.js';

/** The leaky stdio child (plain JS; it imports the compiled fixture from dist/). */
export const LEAKY_STDIO_JS = fileURLToPath(new URL('./children/leaky-stdio.mjs', import.meta.url));

export interface Secret {
  /** What the test calls it, for failure messages. */
  readonly name: string;
  readonly value: string;
  /** The random part, whose fragments must not appear either. */
  readonly random: string;
}

/** The random parts of secrets, drawn from the run's seed (unique within a run, replayable). */
const secretBytes = seededRandom('security/leaks secrets');

/** A fresh secret `<label><random hex>`; `label` may hold characters that JSON escapes. */
export function newSecret(name: string, label: string): Secret {
  const random = secretBytes.bytes(20).toString('hex');
  return { name, value: `${label}${random}`, random };
}

const FRAGMENT = 12;

function forms(secret: Secret): string[] {
  const json = JSON.stringify(secret.value).slice(1, -1);
  const fragments: string[] = [];
  for (let i = 0; i + FRAGMENT <= secret.random.length; i += 1) fragments.push(secret.random.slice(i, i + FRAGMENT));
  return [secret.value, json, JSON.stringify(json).slice(1, -1), encodeURIComponent(secret.value), ...fragments];
}

/** The names of the secrets `text` carries in any form (empty: none). */
export function leakedIn(text: string, secrets: readonly Secret[]): string[] {
  return secrets.filter((secret) => forms(secret).some((form) => text.includes(form))).map((secret) => secret.name);
}

/** Up to 150 characters either side of the first leaked form in `text`. */
function excerptOf(text: string, secrets: readonly Secret[]): string {
  const at = Math.min(...secrets.flatMap(forms).map((form) => text.indexOf(form)).filter((i) => i >= 0));
  return text.slice(Math.max(0, at - 150), at + 150);
}

export interface Leak {
  /** Where the text came from (`log line 12`, `POST /mcp response body`). */
  source: string;
  secrets: string[];
  /** The offending text around the first leak, for the failure message. */
  excerpt: string;
}

/** Every `[source, text]` pair that carries a secret, as a list a test can `toEqual([])`. */
export function findLeaks(texts: Iterable<readonly [string, string]>, secrets: readonly Secret[]): Leak[] {
  const leaks: Leak[] = [];
  for (const [source, text] of texts) {
    const found = leakedIn(text, secrets);
    if (found.length > 0) leaks.push({ source, secrets: found, excerpt: excerptOf(text, secrets) });
  }
  return leaks;
}
