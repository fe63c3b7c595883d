/**
 * Turns tool names, descriptions and queries into index terms, the same way on both sides.
 *
 * Identifiers are split into words at camelCase humps, digits-to-letters boundaries, `_`, `__`,
 * `.`, `-` and `/` (`getPullRequest`, `create_pull_request`, `k8s.pods-list`), and the whole
 * identifier is kept as one more term, so a query that spells a tool's name exactly matches a
 * rare term and ranks that tool above others that merely share its words. Words are lower-cased
 * and lightly stemmed (plural and verb endings), and common English function words are dropped:
 * models phrase a need as "can you create a pull request from my branch", and "a", "from" and
 * "my" would otherwise match everything (and, with prefix matching, "my" would match "mysql").
 */

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

/** A run of letters and digits, or of identifier characters joining such runs. */
const IDENTIFIER = /[\p{L}\p{N}]+(?:[._\-/:]+[\p{L}\p{N}]+)*/gu;
const SEPARATORS = /[._\-/:]+/;
/** Boundaries inside a camelCase or digit-suffixed word: `getHTTPResponse2` → get HTTP Response 2. */
const HUMPS = /\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+|\p{Lu}+|\p{N}+/gu;

/**
 * The words of one identifier, in order, lower-cased and not stemmed: `getPullRequest` →
 * `get pull request`, `github__create_pull_request` → `github create pull request`. A digit run
 * that follows letters stays with them when it is short (`s3`, `ec2`, `k8s`, `v2`).
 */
export function identifierWords(identifier: string): string[] {
  const words: string[] = [];
  for (const part of identifier.split(SEPARATORS)) {
    if (part === '') continue;
    if (/^[\p{Ll}\p{N}]+$/u.test(part) || /^\p{Lu}[\p{Lu}\p{N}]*$/u.test(part) || /^\p{L}{1,3}\p{N}\p{L}?$/u.test(part)) {
      words.push(part.toLowerCase());
      continue;
    }
    for (const hump of part.match(HUMPS) ?? []) words.push(hump.toLowerCase());
  }
  return words;
}

/**
 * A light English stemmer (plural and verb endings only): `issues`, `creating`, `created` and
 * `creates` meet at `creat` / `issu`. Deliberately weaker than Porter's: tool vocabulary is full
 * of proper names and acronyms that an aggressive stemmer merges wrongly.
 */
export function stem(word: string): string {
  if (word.length <= 3 || /\p{N}/u.test(word)) return word;
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is|ys)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing') && VOWEL.test(w.slice(0, -3))) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith('ed') && !w.endsWith('eed') && VOWEL.test(w.slice(0, -2))) w = undouble(w.slice(0, -2));
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

const VOWEL = /[aeiouy]/;

/** `runn` → `run`, `stopp` → `stop`; `install`, `pass`, `buzz` keep their doubled letter. */
function undouble(w: string): string {
  const last = w.at(-1);
  return w.length > 3 && last === w.at(-2) && last !== undefined && !'lsz'.includes(last) ? w.slice(0, -1) : w;
}

/**
 * Index (and query) terms of a piece of text: for every identifier-like run, its stemmed words
 * (stopwords dropped), then — when it had several — the whole run lower-cased with its
 * separators as written, and its `__`/`.`-separated segments likewise.
 */
export function tokenize(text: string): string[] {
  const terms: string[] = [];
  for (const match of text.matchAll(IDENTIFIER)) {
    const run = match[0];
    if (run.length > MAX_TOKEN_LENGTH * 4) continue;
    const words = identifierWords(run);
    for (const word of words) {
      if (word.length <= MAX_TOKEN_LENGTH && !STOPWORDS.has(word)) terms.push(stem(word));
    }
    if (words.length > 1 && run.length <= MAX_TOKEN_LENGTH) {
      terms.push(run.toLowerCase());
      const segments = run.split(/__|\./);
      if (segments.length > 1) {
        for (const segment of segments) if (identifierWords(segment).length > 1) terms.push(segment.toLowerCase());
      }
    }
  }
  return terms;
}

