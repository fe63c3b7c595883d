/**
 * src/ explains itself: no comment points at a document that is not in the repo, or at an issue
 * number. Comments cite the MCP specification or the repo's own docs/ (docs/decisions.md holds the
 * design rules the code follows).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');

const RULES: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'cites a document outside the repo', pattern: /\b(?:DESIGN|PITFALLS|CUSTOMIZATIONS|STYLE)\.md\b/ },
  { name: 'cites an issue number', pattern: /\bissues?\s*#?\d+/i },
  // `#12` alone, but not `owner/repo#12`, `sdk#12` or `&#12;`.
  { name: 'cites an issue number', pattern: /(?:^|[\s(,;[])#\d+\b/ },
];

/** Every line of `text` that breaks a rule, as `line: rule`. */
function citationProblems(text: string): string[] {
  const problems: string[] = [];
  text.split('\n').forEach((line, index) => {
    const broken = new Set(RULES.filter((rule) => rule.pattern.test(line)).map((rule) => rule.name));
    for (const name of broken) problems.push(`${index + 1}: ${name}`);
  });
  return problems;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|js|json|md)$/.test(entry.name) ? [path] : [];
  });
}

describe('comments in src/', () => {
  it('cite neither internal documents nor issue numbers', () => {
    const problems = sourceFiles(join(repo, 'src')).flatMap((file) =>
      citationProblems(readFileSync(file, 'utf8')).map((problem) => `${relative(repo, file)}:${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it.each([
    ['// the rule (DESIGN.md §3)', ['1: cites a document outside the repo']],
    [' * measured, see PITFALLS.md "Networking"', ['1: cites a document outside the repo']],
    ['/** CUSTOMIZATIONS.md and STYLE.md */', ['1: cites a document outside the repo']],
    ['// exactly-once answers (issue 4 part 4)', ['1: cites an issue number']],
    ['// Issue #12: fixed', ['1: cites an issue number']],
    ['// see #512', ['1: cites an issue number']],
    ['// fine\n// (#7)', ['2: cites an issue number']],
  ])('flags %j', (text, expected) => {
    expect(citationProblems(text)).toEqual(expected);
  });

  it.each([
    '// MCP 2025-11-25, Transports, "Security Warning"',
    '// docs/decisions.md, "Egress is decided on the address dialled"',
    '// the SDK leaks a mapping per POST (typescript-sdk#2559)',
    "const entity = '&#38;';",
    '// an issue the operator sees in the log',
    '// RFC 9112 §3.2.2',
  ])('lets %j through', (text) => {
    expect(citationProblems(text)).toEqual([]);
  });
});
