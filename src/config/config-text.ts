/**
 * Config files are JSON with comments (JSONC, as VS Code and docs/reference.md write them): `//` and
 * block comments and trailing commas are accepted. A syntax error is reported with its line and
 * column, never with the text around it (config files hold secrets).
 */
import { parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { ConfigError } from '../errors.js';

/** 1-based line and column of `offset` in `text`. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

const WORDS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'a property name (in double quotes) was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: 'a colon was expected',
  CommaExpected: 'a comma was expected',
  CloseBraceExpected: 'a closing } was expected',
  CloseBracketExpected: 'a closing ] was expected',
  EndOfFileExpected: 'the file should end here',
  InvalidCommentToken: 'invalid comment',
  UnexpectedEndOfComment: 'a comment is not closed',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number is cut short',
  InvalidUnicode: 'invalid unicode escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character in a string',
};

/** Parses JSONC config text; throws `ConfigError` naming the first syntax error's position (later ones usually follow from it). */
export function parseConfigText(text: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  if (errors.length === 0) return value;
  const offsetShift = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const first = errors[0]!;
  const { line, column } = lineAndColumn(text, first.offset + offsetShift);
  const code = printParseErrorCode(first.error);
  throw new ConfigError([`config: invalid JSON at line ${line}, column ${column}: ${WORDS[code] ?? code}`]);
}
