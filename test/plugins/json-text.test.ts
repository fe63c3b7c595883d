import { describe, expect, it } from 'vitest';
import { duplicateMembers, memberRange, parseJsonText, positionAt } from '../../src/plugins/json-text.js';
import type { TextRange } from '../../src/plugins/types.js';
import { sliceByRange } from './plugin-test-helpers.js';

describe('JSON text with positions', () => {
  it('refuses what strict JSON refuses: comments, trailing commas', () => {
    expect(parseJsonText('{"a": 1, /* c */ "b": 2}')).toBeUndefined();
    expect(parseJsonText('{"a": 1,}')).toBeUndefined();
    expect(parseJsonText('{"a": 1}')?.value).toEqual({ a: 1 });
  });

  it('refuses over-deep input without throwing', () => {
    expect(parseJsonText('['.repeat(200_000) + ']'.repeat(200_000))).toBeUndefined();
  });

  it('spans a member from its key through its closing brace, with LF, CRLF and CR line ends', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = ['{', '  "mcpServers": {', '    "a": {', '      "x": 1', '    },', '    "b": { "y": [1, 2] }', '  }', '}'].join(eol);
      const json = parseJsonText(text);
      if (json === undefined) throw new Error('valid JSON refused');
      const a = memberRange(json, ['mcpServers', 'a']) as TextRange;
      expect(a.start).toEqual({ line: 2, character: 4 });
      expect(a.end).toEqual({ line: 4, character: 5 });
      expect(sliceByRange(text, a)).toBe(['"a": {', '      "x": 1', '    }'].join(eol));
      expect(sliceByRange(text, memberRange(json, ['mcpServers', 'b']) as TextRange)).toBe('"b": { "y": [1, 2] }');
    }
  });

  it('counts characters in UTF-16 code units, as LSP positions do', () => {
    const text = '{"🚀é": 1, "k": {"v": "🚀"}}';
    const json = parseJsonText(text);
    if (json === undefined) throw new Error('valid JSON refused');
    const range = memberRange(json, ['k']) as TextRange;
    // "🚀" is two code units: the key "k" starts at offset 11 (counting code points would say 10).
    expect(range.start).toEqual({ line: 0, character: 11 });
    expect(sliceByRange(text, range)).toBe('"k": {"v": "🚀"}');
    expect(positionAt(json, text.length)).toEqual({ line: 0, character: text.length });
  });

  it('has no range for a member that is not there', () => {
    const json = parseJsonText('{"a": {"b": 1}}');
    if (json === undefined) throw new Error('valid JSON refused');
    expect(memberRange(json, ['a', 'c'])).toBeUndefined();
  });

  it('finds members declared twice (which JSON.parse silently collapses)', () => {
    const json = parseJsonText('{"s": {"a": 1, "b": 2, "a": 3}}');
    if (json === undefined) throw new Error('valid JSON refused');
    expect([...duplicateMembers(json, ['s'])]).toEqual(['a']);
    expect(duplicateMembers(json, []).size).toBe(0);
  });
});
