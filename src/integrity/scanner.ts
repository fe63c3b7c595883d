/**
 * The tool-poisoning scanner: a pure check of one tool definition against the rest of its
 * catalogue, returning the reasons it should be looked at by a person before the model reads it
 * (docs/security.md, "Tool integrity"). It flags
 *
 * - `invisible-characters`: zero-width, direction-changing (bidi) and Unicode tag characters, and
 *   variation selectors that do not dress an emoji — text the model reads and a reviewer does not
 *   see ("ASCII smuggling", Trojan Source);
 * - `model-directive`: markup and phrases aimed at the model rather than describing the tool
 *   (`<IMPORTANT>`-style tags, chat-template tokens, "ignore previous instructions", "do not tell
 *   the user");
 * - `secret-read`: telling the model to read or pass on secrets (`~/.ssh`, `id_rsa`, `.env`,
 *   `mcp.json`, …) — a path named without a verb that reads or sends it is not flagged ("paths
 *   such as ~/.ssh are rejected");
 * - `cross-server-tool`: naming another server's namespaced tool (`<server>__<tool>`), or telling
 *   the model to call another server or a tool only another server has (tool shadowing);
 * - `confusable-name`: a name whose UTS 39 skeleton (the `unhomoglyph` table of Unicode's
 *   confusables.txt, between NFD passes) equals another server's tool name that it is not.
 *
 * Precision matters as much as recall: real descriptions say "IMPORTANT", "must" and "never", and
 * many name a bare tool that another server also has; none of that is flagged. The false-positive
 * rate on 1,403 recorded tools of 37 real servers is measured by `npm run bench`.
 *
 * Every string of the pinned definition is scanned (descriptions of schema properties too: a
 * poisoned parameter description reaches the model the same way), up to a bound of text.
 */
import { createRequire } from 'node:module';
import type { PinnedDefinition } from './definition.js';

export type FlagKind = 'invisible-characters' | 'model-directive' | 'secret-read' | 'cross-server-tool' | 'confusable-name';

export const FLAG_KINDS: readonly FlagKind[] = ['invisible-characters', 'model-directive', 'secret-read', 'cross-server-tool', 'confusable-name'];

/** Why a definition is flagged: the kind, where in the definition (a JSON path), and a short excerpt. */
export interface Flag {
  readonly kind: FlagKind;
  /** `name`, `description`, `inputSchema.properties.path.description`, … */
  readonly where: string;
  /** At most ~100 characters: the matched text, invisible characters written as `U+XXXX`. */
  readonly detail: string;
}

/** The catalogue a definition is judged against, compiled once per merged listing. */
export interface ScanCatalogue {
  /** The separator of namespaced names (`null`: names are not namespaced). */
  readonly separator: string | null;
  /** Every server's upstream tool names. */
  readonly servers: ReadonlyMap<string, readonly string[]>;
}

/** Most text scanned in one definition; the rest is not read (a bound, not a verdict). */
export const MAX_SCANNED_CHARS = 256 * 1024;
/** Most flags reported per definition. */
const MAX_FLAGS = 8;

// Invisible and direction-changing characters.

/** Always invisible to a reader: zero-width spaces and marks, bidi controls, word joiners and invisible operators, BOM, tags. */
const ALWAYS_HIDDEN = /[\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u061C\u180E\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u;
/** Every character the check below may report; most text has none and is passed over at once. */
const CANDIDATES = /[\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFE00-\uFE0F\uFEFF\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}]/u;
const EMOJI = /\p{Emoji}/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
const SKIN_TONE = /[\u{1F3FB}-\u{1F3FF}]/u;
const NON_ASCII_LETTER = /[^\p{ASCII}\P{L}]|\p{M}/u;

function codePoint(char: string): string {
  return `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The hidden characters of `text`: every always-hidden one; a zero-width joiner except inside an
 * emoji sequence; a zero-width non-joiner except between two letters of a script that uses it; a
 * variation selector except right after an emoji (keycaps and presentation forms).
 */
export function hiddenCharacters(text: string): string[] {
  if (!CANDIDATES.test(text)) return [];
  const chars = Array.from(text);
  const found: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i] as string;
    const code = char.codePointAt(0) as number;
    if (code < 0x180e) continue;
    if (ALWAYS_HIDDEN.test(char)) {
      found.push(char);
      continue;
    }
    const before = i > 0 ? (chars[i - 1] as string) : '';
    const after = i + 1 < chars.length ? (chars[i + 1] as string) : '';
    if (code === 0x200d) {
      let j = i - 1;
      while (j >= 0 && (chars[j] === '\uFE0F' || SKIN_TONE.test(chars[j] as string))) j--;
      const prev = j >= 0 ? (chars[j] as string) : '';
      if (!(EMOJI.test(prev) && PICTOGRAPHIC.test(after))) found.push(char);
    } else if (code === 0x200c) {
      if (!(NON_ASCII_LETTER.test(before) && NON_ASCII_LETTER.test(after))) found.push(char);
    } else if (code >= 0xfe00 && code <= 0xfe0f) {
      if (!EMOJI.test(before) || /[\uFE00-\uFE0F]/u.test(before)) found.push(char);
    }
  }
  return found;
}

function describeHidden(found: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const char of found) counts.set(codePoint(char), (counts.get(codePoint(char)) ?? 0) + 1);
  return [...counts]
    .slice(0, 6)
    .map(([code, n]) => (n === 1 ? code : `${code} ×${n}`))
    .join(', ');
}

// Markup and phrases aimed at the model.

const DIRECTIVES: ReadonlyArray<{ re: RegExp; what: string }> = [
  {
    re: /<\s*\/?\s*(important|system|instructions?|secret|hidden|critical|admin|assistant|system[_ -]?prompt|user[_ -]?instructions|priority|override)\s*>/i,
    what: 'a tag addressed to the model',
  },
  { re: /<\|\s*[a-z_]{2,20}\s*\|>|\[\/?(INST|SYS|SYSTEM)\]|<<\/?SYS>>/i, what: 'a chat-template token' },
  {
    re: /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|other|original|system)\s+(instructions?|prompts?|rules|directions|guidelines|messages)\b/i,
    what: 'an instruction to ignore other instructions',
  },
  {
    re: /\b(do\s+not|don['’]t|never|must\s+not)\s+(tell|inform|mention|reveal|disclose|show|notify|alert|let)\b[^.!?\n]{0,40}?\bthe\s+user\b/i,
    what: 'an instruction to keep something from the user',
  },
  { re: /\bwithout\s+(telling|informing|notifying|alerting|asking|showing)\s+(it\s+to\s+)?the\s+user\b/i, what: 'an instruction to act behind the user' },
  { re: /\b(hide|conceal|keep)\b[^.!?\n]{0,30}?\b(from|secret\s+from)\s+the\s+user\b/i, what: 'an instruction to hide something from the user' },
  { re: /\bthe\s+user\s+(must|should|need|may)\s*(not|never|n['’]t)\s+(know|see|notice|learn|be\s+told)\b/i, what: 'an instruction to keep something from the user' },
  { re: /\b(you\s+are\s+now|new\s+instructions\s*:|(reveal|print|repeat|leak)\s+(your|the)\s+system\s+prompt)/i, what: 'an attempt to re-instruct the model' },
];

// Reading or passing on secrets.

const SECRET = /(~\/\.ssh\b|\.ssh\/|\bid_(rsa|dsa|ecdsa|ed25519)\b|(^|[\s"'`(/=])\.env\b|~\/\.aws\b|\.aws\/credentials|\bmcp\.json\b|\.npmrc\b|\.netrc\b|\.pgpass\b|\.git-credentials\b|\/etc\/(shadow|passwd)\b|\.kube\/config\b|\.docker\/config\.json\b|\.gnupg\b|\bprivate[_ -]key\b|\b(api[_ -]?key|access[_ -]token|password)s?\s+(of|from)\s+(the\s+)?(user|environment|config))/i;
const READS = /\b(read|reads|reading|cat|open|include|including|send|sending|upload|pass|passing|attach|provide|copy|content|contents|load|print|output|fetch|forward|paste|exfiltrat\w*|retrieve|leak|embed|append|put)\b/i;

/** Sentences: split at sentence punctuation followed by space or end (a path's own dots stay), and at line ends. */
function sentences(text: string): string[] {
  return text.split(/(?<=[.!?])\s+|\n+/);
}

// Other servers' tools.

const CALLS = /\b(call|calls|calling|use|using|invoke|invoking|run|execute|trigger|send\s+\w+\s+(via|through|with|using))\b/i;
/** A bare tool name distinctive enough to be a reference: has `_`, `-` or an inner capital, ≥ 5 characters. */
const DISTINCT_NAME = /^(?=.{5,})[A-Za-z][A-Za-z0-9]*([_-][A-Za-z0-9]+|[a-z0-9][A-Z][A-Za-z0-9]*)+$/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Unicode's confusables table (confusables.txt, UTS 39) as the `unhomoglyph` package ships it:
 * one code point → its prototype. Read into a map once; the package's own function runs one
 * 6,000-branch regular expression over the text, about a millisecond per tool name.
 */
const PROTOTYPES: ReadonlyMap<string, string> = new Map(Object.entries(createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>));

/** UTS 39 skeleton: NFD, each confusable code point replaced by its prototype, NFD again. */
export function skeleton(text: string): string {
  let out = '';
  for (const char of text.normalize('NFD')) out += PROTOTYPES.get(char) ?? char;
  return out.normalize('NFD');
}

/** A catalogue prepared for scanning: regexes and skeleton index built once. */
export interface CompiledScanCatalogue {
  readonly separator: string | null;
  /** Per server: the pattern of another server's namespaced tool or of another server called by name. */
  readonly others: ReadonlyMap<string, { namespaced: RegExp | undefined; called: RegExp | undefined }>;
  /** Distinctive tool names → the servers that have them. */
  readonly owners: ReadonlyMap<string, ReadonlySet<string>>;
  /** Skeleton → the (server, name) pairs that have it. */
  readonly skeletons: ReadonlyMap<string, ReadonlyArray<{ server: string; name: string }>>;
}

/** Most servers and names compiled into one catalogue's patterns (the rest are not cross-checked). */
const MAX_SERVERS = 256;
const MAX_NAMES = 20_000;

export function compileScanCatalogue(catalogue: ScanCatalogue): CompiledScanCatalogue {
  const servers = [...catalogue.servers.keys()].slice(0, MAX_SERVERS);
  const skeletons = new Map<string, Array<{ server: string; name: string }>>();
  const owners = new Map<string, Set<string>>();
  let names = 0;
  for (const server of servers) {
    for (const name of catalogue.servers.get(server) ?? []) {
      if (++names > MAX_NAMES) break;
      const key = skeleton(name);
      let list = skeletons.get(key);
      if (list === undefined) skeletons.set(key, (list = []));
      list.push({ server, name });
      let owner = owners.get(name);
      if (owner === undefined) owners.set(name, (owner = new Set()));
      owner.add(server);
    }
  }
  const others = new Map<string, { namespaced: RegExp | undefined; called: RegExp | undefined }>();
  for (const server of servers) {
    const rest = servers.filter((s) => s !== server).sort((a, b) => b.length - a.length);
    const alternatives = rest.map(escapeRegExp).join('|');
    const namespaced =
      catalogue.separator === null || rest.length === 0
        ? undefined
        : new RegExp(`(?<![A-Za-z0-9])(${alternatives})${escapeRegExp(catalogue.separator)}[A-Za-z0-9][A-Za-z0-9_.-]*`, 'i');
    const called = rest.length === 0 ? undefined : new RegExp(`\\b(${alternatives})(\\s+(mcp\\s+)?(server|tool|tools|mcp)\\b|['’]s\\s+\\w+)`, 'i');
    others.set(server, { namespaced, called });
  }
  for (const name of owners.keys()) if (!DISTINCT_NAME.test(name)) owners.delete(name);
  return { separator: catalogue.separator, others, owners, skeletons };
}

/** Characters of a name that stand in for others: anything but lower-case ASCII letters and `_-.` whose skeleton differs. */
function lookAlikes(name: string): number {
  let count = 0;
  for (const char of name.normalize('NFD')) if (!/[a-z_.-]/.test(char) && skeleton(char) !== char) count++;
  return count;
}

const WORDS = /[A-Za-z][A-Za-z0-9_-]{3,}/g;

function excerpt(text: string, index: number, length: number): string {
  const start = Math.max(0, index - 20);
  const end = Math.min(text.length, index + Math.min(length, 60) + 20);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ')}${end < text.length ? '…' : ''}`;
}

/** Every string of a definition (values and object keys) with its JSON path, up to the scan bound. */
function strings(definition: PinnedDefinition): Array<{ where: string; text: string }> {
  const out: Array<{ where: string; text: string }> = [];
  let budget = MAX_SCANNED_CHARS;
  const walk = (value: unknown, where: string, depth: number): void => {
    if (budget <= 0 || depth > 64) return;
    if (typeof value === 'string') {
      const text = value.length > budget ? value.slice(0, budget) : value;
      budget -= text.length;
      out.push({ where, text });
    } else if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, `${where}[${i}]`, depth + 1));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = where === '' ? key : `${where}.${key}`;
        walk(key, `${at}(key)`, depth + 1);
        walk(item, at, depth + 1);
      }
    }
  };
  walk(definition, '', 0);
  return out;
}

/**
 * The flags of one tool definition of `server` in `catalogue`; an empty array when nothing is
 * suspicious. Pure: the same definition and catalogue always give the same flags.
 */
export function scanTool(definition: PinnedDefinition, server: string, catalogue: CompiledScanCatalogue): Flag[] {
  const flags: Flag[] = [];
  const add = (flag: Flag) => {
    if (flags.length < MAX_FLAGS && !flags.some((f) => f.kind === flag.kind && f.where === flag.where)) flags.push(flag);
  };
  const others = catalogue.others.get(server);
  for (const { where, text } of strings(definition)) {
    const hidden = hiddenCharacters(text);
    if (hidden.length > 0) add({ kind: 'invisible-characters', where, detail: describeHidden(hidden) });
    for (const { re, what } of DIRECTIVES) {
      const match = re.exec(text);
      if (match !== null) {
        add({ kind: 'model-directive', where, detail: `${what}: ${excerpt(text, match.index, match[0].length)}` });
        break;
      }
    }
    // The per-sentence checks run only on text that has what they look for.
    const secrets = SECRET.test(text);
    const crossing = others !== undefined && (others.namespaced?.test(text) === true || CALLS.test(text));
    if (!secrets && !crossing) continue;
    for (const sentence of sentences(text)) {
      const secret = secrets ? SECRET.exec(sentence) : null;
      if (secret !== null && READS.test(sentence)) {
        add({ kind: 'secret-read', where, detail: excerpt(sentence, secret.index, secret[0].length) });
      }
      if (others === undefined || !crossing) continue;
      const namespaced = others.namespaced?.exec(sentence);
      if (namespaced != null) {
        add({ kind: 'cross-server-tool', where, detail: `names another server's tool ${namespaced[0]}` });
        continue;
      }
      if (!CALLS.test(sentence)) continue;
      const called = others.called?.exec(sentence);
      if (called != null) {
        add({ kind: 'cross-server-tool', where, detail: `tells the model to use another server: ${excerpt(sentence, called.index, called[0].length)}` });
        continue;
      }
      // A distinctive name only other servers have: calling it by name reaches across.
      for (const word of sentence.match(WORDS) ?? []) {
        const owning = catalogue.owners.get(word);
        if (owning !== undefined && !owning.has(server)) {
          add({ kind: 'cross-server-tool', where, detail: `tells the model to call ${word}, a tool of server "${[...owning][0] as string}"` });
          break;
        }
      }
    }
  }
  const key = skeleton(definition.name);
  for (const other of catalogue.skeletons.get(key) ?? []) {
    if (other.server === server || other.name === definition.name) continue;
    // Of two confusable names, the one with fewer look-alike characters is taken for the original.
    if (lookAlikes(definition.name) < lookAlikes(other.name)) continue;
    add({ kind: 'confusable-name', where: 'name', detail: `confusable with "${other.name}" of server "${other.server}"` });
    break;
  }
  return flags;
}
