/**
 * Turns tool names, descriptions and queries into index terms, the same way on both sides.
 *
 * Identifiers are split into words at camelCase humps, digits-to-letters boundaries, `_`, `__`,
 * `.`, `-` and `/` (`getPullRequest`, `create_pull_request`, `k8s.pods-list`), and the whole
 * identifier is kept as one more term, so a query that spells a tool's name exactly matches a
 * rare term and ranks that tool above others that merely share its words. That term is the
 * words run together, marked (`~createpullrequest`), so `create_pull_request`, `createPullRequest` and
 * `create-pull-request` meet. Words are lower-cased
 * and lightly stemmed (plural and verb endings), and common English function words are dropped:
 * models phrase a need as "can you create a pull request from my branch", and "a", "from" and
 * "my" would otherwise match everything (and, with prefix matching, "my" would match "mysql").
 */

/**
 * Marks a whole-identifier term (`~createpullrequest`): it is matched exactly, never as a
 * prefix or with a typo, so `list` does not expand to every `list…` tool name.
 */
export const COMPOUND = '~';

/** Longest token considered; longer runs (base64, hashes) are noise and are dropped. */
const MAX_TOKEN_LENGTH = 64;

const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for from with without into onto over under about as ' +
    'is are was were be been being am do does did doing done have has had having will would shall should can ' +
    'could may might must i me my mine we us our ours you your yours he she it its they them their this that ' +
    'these those there here what which who whom whose when where why how please want wanted need needs ' +
    'like just some any so also via using use let lets make sure able tell know something thing things ' +
    'up out off again very really currently current one ones'
  ).split(' '),
);

/**
 * A run of word characters, or of identifier characters joining such runs. Word characters are
 * ASCII letters and digits and every non-ASCII character outside the space and punctuation
 * blocks (Latin-1 punctuation, General Punctuation, CJK punctuation): close enough to
 * `[\p{L}\p{N}]` for tool text, and without the `u` flag it matches several times faster.
 */
const W = 'A-Za-z0-9\\u00C0-\\u1FFF\\u2070-\\u2FFF\\u3040-\\uFEFF';
const IDENTIFIER = new RegExp(`[${W}]+(?:[._\\-/:]+[${W}]+)*`, 'g');

/** The identifier-like runs of a text, in order. */
export function identifierRuns(text: string): string[] {
  return text.match(IDENTIFIER) ?? [];
}

const SEPARATORS = /[._\-/:]+/;
/** One ASCII word, lower case or capitalised. */
const SIMPLE_WORD = /^[A-Z]?[a-z]+$/;
const ASCII = /^[\x00-\x7f]*$/;

/** The expressions that split a word, in an ASCII version (several times faster) and a Unicode one. */
interface WordPatterns {
  /** Words taken whole: `issues`, `s3`, `HTML`, `K8s`. */
  readonly whole: readonly RegExp[];
  /** Boundaries inside a camelCase or digit-suffixed word: `getHTTPResponse2` → get HTTP Response 2. */
  readonly humps: RegExp;
  readonly digits: RegExp;
  readonly letters: RegExp;
  readonly oneLower: RegExp;
}

const ASCII_PATTERNS: WordPatterns = {
  whole: [/^[a-z0-9]+$/, /^[A-Z][A-Z0-9]*$/, /^[A-Za-z]{1,3}[0-9][A-Za-z]?$/],
  humps: /[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+/g,
  digits: /^[0-9]+$/,
  letters: /^[A-Za-z]+$/,
  oneLower: /^[a-z]$/,
};

const UNICODE_PATTERNS: WordPatterns = {
  whole: [/^[\p{Ll}\p{N}]+$/u, /^\p{Lu}[\p{Lu}\p{N}]*$/u, /^\p{L}{1,3}\p{N}\p{L}?$/u],
  humps: /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+/gu,
  digits: /^\p{N}+$/u,
  letters: /^\p{L}+$/u,
  oneLower: /^\p{Ll}$/u,
};

/**
 * The words of one identifier, in order, lower-cased and not stemmed: `getPullRequest` →
 * `get pull request`, `github__create_pull_request` → `github create pull request`. A digit run
 * that follows letters stays with them when it is short (`s3`, `ec2`, `k8s`, `v2`).
 */
export function identifierWords(identifier: string): string[] {
  const patterns = ASCII.test(identifier) ? ASCII_PATTERNS : UNICODE_PATTERNS;
  const words: string[] = [];
  for (const part of identifier.split(SEPARATORS)) {
    if (part === '') continue;
    if (patterns.whole.some((whole) => whole.test(part))) {
      words.push(part.toLowerCase());
      continue;
    }
    words.push(...joinShortDigitRuns(part.match(patterns.humps) ?? [], patterns));
  }
  return words;
}

/** `list S 3 Buckets` → `list s3 buckets`, `K 8 s` → `k8s`: a digit run stays with a short letter run. */
function joinShortDigitRuns(humps: readonly string[], patterns: WordPatterns): string[] {
  const out: string[] = [];
  for (let i = 0; i < humps.length; i += 1) {
    const hump = (humps[i] as string).toLowerCase();
    const previous = out.at(-1);
    if (patterns.digits.test(hump) && previous !== undefined && previous.length <= 3 && patterns.letters.test(previous)) {
      let joined = previous + hump;
      const next = humps[i + 1];
      if (next !== undefined && patterns.oneLower.test(next)) {
        joined += next;
        i += 1;
      }
      out[out.length - 1] = joined;
    } else {
      out.push(hump);
    }
  }
  return out;
}

/**
 * A light English stemmer (plural and verb endings only): `issues`, `creating`, `created` and
 * `creates` meet at `creat` / `issu`. Deliberately weaker than Porter's: tool vocabulary is full
 * of proper names and acronyms that an aggressive stemmer merges wrongly.
 */
export function stem(word: string): string {
  if (word.length <= 3 || hasDigit(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is') && !w.endsWith('ys')) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing') && hasVowel(w, w.length - 3)) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith('ed') && !w.endsWith('eed') && hasVowel(w, w.length - 2)) w = undouble(w.slice(0, -2));
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

function hasDigit(word: string): boolean {
  for (let i = 0; i < word.length; i += 1) {
    const c = word.charCodeAt(i);
    if (c >= 48 && c <= 57) return true;
    if (c > 127) return /\p{N}/u.test(word);
  }
  return false;
}

/** Whether `word` has a vowel (y included) before `end`. */
function hasVowel(word: string, end: number): boolean {
  for (let i = 0; i < end; i += 1) if ('aeiouy'.includes(word[i] as string)) return true;
  return false;
}

/** `runn` → `run`, `stopp` → `stop`; `install`, `pass`, `buzz` keep their doubled letter. */
function undouble(w: string): string {
  const last = w.at(-1);
  return w.length > 3 && last === w.at(-2) && last !== undefined && !'lsz'.includes(last) ? w.slice(0, -1) : w;
}

/**
 * Index (and query) terms of a piece of text: for every identifier-like run, its stemmed words
 * (stopwords dropped), then — when it had several — all its words run together, and likewise
 * each of its `__`/`.`-separated segments.
 */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  for (const run of identifierRuns(text)) termsOfIdentifier(run, terms);
  return terms;
}

/** Appends the terms of one identifier run (see {@link tokenize}) to `terms`. */
export function termsOfIdentifier(run: string, terms: string[]): void {
  if (run.length > MAX_TOKEN_LENGTH * 4) return;
  if (SIMPLE_WORD.test(run)) {
    // The common case (`description`, `Create`): one word, nothing to split.
    const word = run.toLowerCase();
    if (word.length <= MAX_TOKEN_LENGTH && !STOPWORDS.has(word)) terms.push(stem(word));
    return;
  }
  const words = identifierWords(run);
  for (const word of words) {
    if (word.length <= MAX_TOKEN_LENGTH && !STOPWORDS.has(word)) terms.push(stem(word));
  }
  if (words.length > 1 && run.length <= MAX_TOKEN_LENGTH) {
    terms.push(COMPOUND + words.join(''));
    const segments = run.split(/__|\./);
    if (segments.length > 1) {
      for (const segment of segments) {
        const segmentWords = identifierWords(segment);
        if (segmentWords.length > 1) terms.push(COMPOUND + segmentWords.join(''));
      }
    }
  }
}
