/**
 * Which index terms a query term also matches: longer terms it is a prefix of (`deploym` →
 * `deployment`), and terms one edit away (a deletion, insertion, substitution or transposition
 * of one character: `atendee` → `attendee`). Both are bounded per query term, so a short or
 * common prefix costs at most {@link MAX_PREFIX_EXPANSIONS} postings lists.
 */
import type { Postings } from './postings.js';

export const MAX_PREFIX_EXPANSIONS = 32;
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** Term ids of index terms that start with `prefix` (the term itself excluded). */
export function prefixExpansions(postings: Postings, prefix: string): number[] {
  const terms = postings.sortedTerms;
  let lo = 0;
  let hi = terms.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((terms[mid] as string) < prefix) lo = mid + 1;
    else hi = mid;
  }
  const out: number[] = [];
  for (let i = lo; i < terms.length && out.length < MAX_PREFIX_EXPANSIONS; i += 1) {
    const term = terms[i] as string;
    if (!term.startsWith(prefix)) break;
    if (term !== prefix) out.push(postings.termIds.get(term) as number);
  }
  return out;
}

/** Term ids of index terms exactly one edit from `term` (lower-case ASCII edits). */
export function oneEditExpansions(postings: Postings, term: string): number[] {
  const found = new Set<number>();
  const probe = (candidate: string) => {
    const id = postings.termIds.get(candidate);
    if (id !== undefined && candidate !== term) found.add(id);
  };
  for (let i = 0; i <= term.length; i += 1) {
    const head = term.slice(0, i);
    const tail = term.slice(i);
    if (i < term.length) probe(head + tail.slice(1));
    if (i < term.length - 1) probe(head + (tail[1] as string) + (tail[0] as string) + tail.slice(2));
    for (const c of ALPHABET) {
      probe(head + c + tail);
      if (i < term.length) probe(head + c + tail.slice(1));
    }
  }
  return [...found];
}
