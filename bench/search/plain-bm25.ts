/**
 * The reference ranking every evaluation set is reported beside: a plain Okapi BM25 (k1 1.2,
 * b 0.75) over each tool's fields concatenated into one text — the name split into words, title,
 * description, parameter names and descriptions, server name and instructions, with the same
 * per-field caps the index applies — lower-cased words, no stemming, no stop words, no field
 * weights, no prefix matching. Written apart from the index on purpose: it shares only the
 * field texts and the identifier splitting, so a trick of the index cannot leak into the row
 * it is judged against.
 */
import type { ToolSnapshot } from '../../src/catalogue/search/snapshot.js';
import { FIELDS, toolDocument } from '../../src/catalogue/search/tool-document.js';
import { identifierRuns, identifierWords } from '../../src/catalogue/search/tokenize.js';

const K1 = 1.2;
const B = 0.75;

export interface Searcher {
  search(query: string, options: { limit: number; server?: string }): Array<{ name: string }>;
}

function words(text: string): string[] {
  const out: string[] = [];
  for (const run of identifierRuns(text)) for (const word of identifierWords(run)) out.push(word);
  return out;
}

export function plainBm25(snapshot: ToolSnapshot): Searcher {
  const servers = new Map(snapshot.servers.map((s) => [s.name, s]));
  const names = snapshot.tools.map((t) => t.name);
  const serverOf = snapshot.tools.map((t) => t.server);
  const lengths: number[] = [];
  const postings = new Map<string, Array<[number, number]>>();
  snapshot.tools.forEach((tool, doc) => {
    const fields = toolDocument(tool, servers.get(tool.server));
    const terms = words(FIELDS.map((f) => fields[f]).join('\n'));
    lengths.push(terms.length);
    const counts = new Map<string, number>();
    for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
    for (const [term, count] of counts) {
      let list = postings.get(term);
      if (list === undefined) postings.set(term, (list = []));
      list.push([doc, count]);
    }
  });
  const n = names.length;
  const average = lengths.reduce((a, b) => a + b, 0) / Math.max(1, n);
  return {
    search(query, { limit, server }) {
      const scores = new Map<number, number>();
      for (const term of new Set(words(query))) {
        const list = postings.get(term);
        if (list === undefined) continue;
        const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
        for (const [doc, tf] of list) {
          if (server !== undefined && serverOf[doc] !== server) continue;
          const norm = tf + K1 * (1 - B + (B * (lengths[doc] as number)) / average);
          scores.set(doc, (scores.get(doc) ?? 0) + (idf * tf * (K1 + 1)) / norm);
        }
      }
      return [...scores]
        .sort((a, b) => b[1] - a[1] || ((names[a[0]] as string) < (names[b[0]] as string) ? -1 : 1))
        .slice(0, limit)
        .map(([doc]) => ({ name: names[doc] as string }));
    },
  };
}
