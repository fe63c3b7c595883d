/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4): every line is a
 * `# HELP`, a `# TYPE` or a sample `name{label="value",…} number`, label values unescaped per the
 * format; anything else throws, naming the line. `promtool check metrics` runs where installed.
 */
import { spawnSync } from 'node:child_process';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
  /** Samples of `name` whose labels include every pair of `match`. */
  find(name: string, match?: Record<string, string>): Sample[];
  /** The one sample of `name` matching exactly; throws when there is none or several. */
  value(name: string, match?: Record<string, string>): number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

function parseLabels(text: string, line: string): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  let at = 1; // past '{'
  while (text[at] !== '}') {
    const name = LABEL_NAME.exec(text.slice(at))?.[0];
    if (name === undefined || text[at + name.length] !== '=' || text[at + name.length + 1] !== '"') throw new Error(`bad label in: ${line}`);
    at += name.length + 2;
    let value = '';
    for (;;) {
      const ch = text[at];
      if (ch === undefined) throw new Error(`unterminated label value in: ${line}`);
      at += 1;
      if (ch === '"') break;
      if (ch === '\\') {
        const next = text[at];
        at += 1;
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape in: ${line}`);
      } else value += ch;
    }
    if (name in labels) throw new Error(`repeated label ${name} in: ${line}`);
    labels[name] = value;
    if (text[at] === ',') at += 1;
    else if (text[at] !== '}') throw new Error(`bad label separator in: ${line}`);
  }
  return { labels, rest: text.slice(at + 1) };
}

function parseValue(text: string, line: string): number {
  // Values are read like Go's ParseFloat (what Prometheus uses): Inf and NaN in any case.
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

export function parseExposition(body: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  const seen = new Set<string>();
  if (!body.endsWith('\n')) throw new Error('exposition does not end with a newline');
  for (const line of body.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
      if (match === null) throw new Error(`bad comment line: ${line}`);
      if (match[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(match[3]!)) throw new Error(`bad type: ${line}`);
        if (types.has(match[2]!)) throw new Error(`second TYPE for ${match[2]}`);
        types.set(match[2]!, match[3]!);
      }
      continue;
    }
    const name = NAME.exec(line)?.[0];
    if (name === undefined) throw new Error(`bad sample line: ${line}`);
    let rest = line.slice(name.length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) ({ labels, rest } = parseLabels(rest, line));
    if (!rest.startsWith(' ')) throw new Error(`no value in: ${line}`);
    const [valueText, timestamp, extra] = rest.slice(1).split(' ');
    if (extra !== undefined || (timestamp !== undefined && !/^-?\d+$/.test(timestamp))) throw new Error(`bad sample tail: ${line}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`duplicate series: ${line}`);
    seen.add(key);
    samples.push({ name, labels, value: parseValue(valueText ?? '', line) });
  }
  const find = (name: string, match: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
  return {
    samples,
    types,
    find,
    value(name, match = {}) {
      const found = find(name, match);
      if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(match)}`);
      return found[0]!.value;
    },
  };
}

/** `promtool check metrics` on `body`: undefined when promtool is not installed, else its verdict. */
export function promtoolCheck(body: string): { ok: boolean; output: string } | undefined {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8', timeout: 30_000 });
  if (run.error !== undefined && (run.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  return { ok: run.status === 0, output: `${run.stdout ?? ''}${run.stderr ?? ''}` };
}
