/**
 * Config files are JSON with comments (JSONC, as VS Code and docs/reference.md write them): `//` and
 * block comments and trailing commas are accepted. A syntax error is reported with its line and
 * column, never with the text around it (config files hold secrets). A `__proto__` key is refused,
 * naming where it is: parsed into a plain object it would silently disappear.
 */
import { parse, printParseErrorCode, visit, type ParseError } from 'jsonc-parser';
import { ConfigError } from '../errors.js';
import { RESERVED_SERVER_NAME } from './server-schema.js';

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

/**
 * Every `__proto__` key of the text, as a config path. The parser writes keys into plain objects,
 * where `__proto__` sets the object's prototype instead of adding an entry: the entry would vanish
 * without a word (a server so named would not start, and nothing would say why).
 */
function protoKeys(text: string): string[] {
  // Cheap for the usual file; a key spelt with escapes (`\u005f…`) has a backslash-u.
  if (!text.includes('proto') && !text.includes('\\u')) return [];
  const found: string[] = [];
  visit(text, {
    onObjectProperty: (property, _offset, _length, _line, _column, pathSupplier) => {
      if (property === '__proto__') found.push([...pathSupplier(), property].map(String).join('.'));
    },
  }, { allowTrailingComma: true, disallowComments: false });
  return found;
}

/** The diagnostic for a `__proto__` key at `path`: a server's names the server. */
function protoKeyProblem(path: string): string {
  const parts = path.split('.');
  const server = parts.length === 2 && (parts[0] === 'servers' || parts[0] === 'mcpServers');
  return server
    ? `${path}: ${RESERVED_SERVER_NAME}`
    : `${path}: "__proto__" cannot be a key (a JavaScript object would take it as its prototype and the entry would be lost); rename or remove it`;
}

/** Parses JSONC config text; throws `ConfigError` naming the first syntax error's position (later ones usually follow from it). */
export function parseConfigText(text: string): unknown {
  const errors: ParseError[] = [];
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const value: unknown = parse(body, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  if (errors.length === 0) {
    const reserved = protoKeys(body);
    if (reserved.length > 0) throw new ConfigError(reserved.map(protoKeyProblem));
    return value;
  }
  const offsetShift = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const first = errors[0]!;
  const { line, column } = lineAndColumn(text, first.offset + offsetShift);
  const code = printParseErrorCode(first.error);
  throw new ConfigError([`config: invalid JSON at line ${line}, column ${column}: ${WORDS[code] ?? code}`]);
}
