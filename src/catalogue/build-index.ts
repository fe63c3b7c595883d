/**
 * The resource routing index: which upstream owns a resource URI (for `resources/read`,
 * `resources/subscribe`, `resources/unsubscribe`). Exact URIs from `resources/list` first, then
 * the first URI template, in server order, that matches (docs/decisions.md, "Names and
 * routing").
 *
 * Why not `UriTemplate.match` from the SDK: it builds a backtracking RegExp per call, and a
 * template with several expressions is polynomial in the URI length. Measured with SDK 2.4.0,
 * the ordinary template `db://{schema}.{table}.{column}` takes 2.2 s on a 2 KB URI of dots and
 * grows cubically, so any client could stall the gateway's event loop with one `resources/read`.
 * This module accepts exactly the language the SDK's `match` accepts (the test suite checks that
 * differentially against the SDK) but decides it with a set-of-states automaton: O(URI length ×
 * template size), no backtracking. The SDK's `UriTemplate` still parses and validates templates.
 */
import { UriTemplate } from '@modelcontextprotocol/server';

/** Longest URI the SDK matches (it throws beyond); longer URIs match no template here either. */
const MAX_URI_LENGTH = 1_000_000;

/** A compiled URI template: `test` says whether a URI matches it. */
export interface UriTemplateMatcher {
  readonly uriTemplate: string;
  test(uri: string): boolean;
}

/** One routable template: reads of a URI it matches go to `server`. */
export interface TemplateRoute {
  readonly server: string;
  readonly uriTemplate: string;
  readonly matcher: UriTemplateMatcher;
}

/**
 * The server that owns `uri`: the exact URI index first, then the first route (in order) whose
 * template matches; `undefined` when none does.
 */
export function routeResourceUri(
  uri: string,
  resourceIndex: ReadonlyMap<string, string>,
  routes: readonly TemplateRoute[],
): string | undefined {
  const exact = resourceIndex.get(uri);
  if (exact !== undefined) return exact;
  for (const route of routes) {
    if (route.matcher.test(uri)) return route.server;
  }
  return undefined;
}

/**
 * Compiles a URI template (RFC 6570 syntax as the SDK reads it) once. Throws `TypeError` when
 * the SDK's `UriTemplate` refuses the template (e.g. an unclosed `{`) or has an expression
 * without a variable name (`{}`, `{?}`), which the SDK cannot match either.
 */
export function compileUriTemplate(uriTemplate: string): UriTemplateMatcher {
  try {
    new UriTemplate(uriTemplate);
  } catch {
    throw new TypeError('resource index: a URI template could not be parsed');
  }
  const parts = parseTemplate(uriTemplate);
  // `{}` parses in the SDK, but its `match` then throws on every URI the expression would match.
  if (parts.some((part) => typeof part !== 'string' && part.names.length === 0)) {
    throw new TypeError('resource index: a URI template has an expression without a variable name');
  }
  const automaton = new Automaton();
  for (const part of parts) addPart(automaton, part);
  const { edges, accept } = automaton;

  return {
    uriTemplate,
    test(uri: string): boolean {
      if (uri.length > MAX_URI_LENGTH) return false;
      let current = [0];
      const seenAt = new Int32Array(edges.length).fill(-1);
      for (let i = 0; i < uri.length; i += 1) {
        const code = uri.charCodeAt(i);
        const next: number[] = [];
        for (const state of current) {
          for (const [accepts, target] of edges[state] as Edge[]) {
            if (seenAt[target] !== i && accepts(code)) {
              seenAt[target] = i;
              next.push(target);
            }
          }
        }
        if (next.length === 0) return false;
        current = next;
      }
      return current.includes(accept);
    },
  };
}

type CharTest = (code: number) => boolean;
type Edge = readonly [CharTest, number];

/** The SDK's `[^/,]`. */
const notSlashOrComma: CharTest = (c) => c !== 0x2f && c !== 0x2c;
/** The SDK's `.` (no `s` flag): anything but a line terminator. */
const notLineTerminator: CharTest = (c) => c !== 0x0a && c !== 0x0d && c !== 0x2028 && c !== 0x2029;
/** The SDK's `[^&]`. */
const notAmpersand: CharTest = (c) => c !== 0x26;
const COMMA = 0x2c;

/** A nondeterministic automaton without empty moves, built left to right; `accept` is the end. */
class Automaton {
  readonly edges: Edge[][] = [[]];
  accept = 0;

  private state(): number {
    this.edges.push([]);
    return this.edges.length - 1;
  }

  private edge(from: number, accepts: CharTest, to: number): void {
    (this.edges[from] as Edge[]).push([accepts, to]);
  }

  /** Exact UTF-16 code units (the SDK's RegExp has no `i` or `u` flag). */
  literal(text: string): void {
    for (let i = 0; i < text.length; i += 1) {
      const code = text.charCodeAt(i);
      const next = this.state();
      this.edge(this.accept, (c) => c === code, next);
      this.accept = next;
    }
  }

  /** `X+`. */
  oneOrMore(accepts: CharTest): void {
    const run = this.state();
    this.edge(this.accept, accepts, run);
    this.edge(run, accepts, run);
    this.accept = run;
  }

  /** `X+(?:,X+)*`, the SDK's exploded form. */
  commaList(accepts: CharTest): void {
    const run = this.state();
    const afterComma = this.state();
    this.edge(this.accept, accepts, run);
    this.edge(run, accepts, run);
    this.edge(run, (c) => c === COMMA, afterComma);
    this.edge(afterComma, accepts, run);
    this.accept = run;
  }
}

interface Expression {
  readonly operator: string;
  readonly names: readonly string[];
  readonly exploded: boolean;
}

/** The SDK's `UriTemplate.parse`, reproduced (it is private): literal text and `{…}` expressions. */
function parseTemplate(template: string): Array<string | Expression> {
  const parts: Array<string | Expression> = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    if (template[i] !== '{') {
      text += template[i];
      i += 1;
      continue;
    }
    if (text !== '') parts.push(text);
    text = '';
    const end = template.indexOf('}', i);
    const expression = template.slice(i + 1, end);
    const operator = ['+', '#', '.', '/', '?', '&'].find((op) => expression.startsWith(op)) ?? '';
    const names = expression
      .slice(operator.length)
      .split(',')
      .map((name) => name.replace('*', '').trim())
      .filter((name) => name.length > 0);
    parts.push({ operator, names, exploded: expression.includes('*') });
    i = end + 1;
  }
  if (text !== '') parts.push(text);
  return parts;
}

/** The SDK's `partToRegExp`, as automaton steps. */
function addPart(automaton: Automaton, part: string | Expression): void {
  if (typeof part === 'string') {
    automaton.literal(part);
    return;
  }
  switch (part.operator) {
    case '?':
    case '&':
      part.names.forEach((name, i) => {
        automaton.literal(`${i === 0 ? part.operator : '&'}${name}=`);
        automaton.oneOrMore(notAmpersand);
      });
      return;
    case '+':
    case '#':
      automaton.oneOrMore(notLineTerminator);
      return;
    case '.':
      automaton.literal('.');
      automaton.oneOrMore(notSlashOrComma);
      return;
    case '/':
      automaton.literal('/');
      if (part.exploded) automaton.commaList(notSlashOrComma);
      else automaton.oneOrMore(notSlashOrComma);
      return;
    default:
      if (part.exploded) automaton.commaList(notSlashOrComma);
      else automaton.oneOrMore(notSlashOrComma);
  }
}
