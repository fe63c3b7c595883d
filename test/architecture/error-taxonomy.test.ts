/**
 * One error taxonomy: every JSON-RPC error a client sees is built in src/errors.ts (the codes,
 * statuses and conditions are in docs/errors.md). Anywhere else in src/, an error response body,
 * an `error: { code, … }` object or a JSON-RPC error code written as a number is a second
 * taxonomy growing; it must be a `GatewayError` answered through errors.ts instead.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { taxonomy } from '../../src/errors.js';
import { describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const TAXONOMY = join(repo, 'src', 'errors.ts');

function propertyNamed(node: ts.ObjectLiteralExpression, name: string): ts.ObjectLiteralElementLike | undefined {
  return node.properties.find((property) => property.name !== undefined && ts.isIdentifier(property.name) && property.name.text === name)
    ?? node.properties.find((property) => property.name !== undefined && ts.isStringLiteral(property.name) && property.name.text === name);
}

function isWireCode(node: ts.Node): boolean {
  return ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'WireCode';
}

function isUpstreamAnswer(node: ts.Node): boolean {
  const parent = node.parent;
  return parent !== undefined && ts.isNewExpression(parent) && ts.isIdentifier(parent.expression)
    && parent.expression.text === 'UpstreamRpcError' && parent.arguments?.[0] === node;
}

/** Every place in `text` that builds a JSON-RPC error by hand, as `line: what`. */
export function inlineErrors(text: string): string[] {
  const source = ts.createSourceFile('scan.ts', text, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  const report = (node: ts.Node, what: string) =>
    problems.push(`${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what}`);
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const error = propertyNamed(node, 'error');
      if (propertyNamed(node, 'jsonrpc') !== undefined && error !== undefined) report(node, 'a JSON-RPC error response');
      else if (error !== undefined && ts.isPropertyAssignment(error) && ts.isObjectLiteralExpression(error.initializer)) {
        if (propertyNamed(error.initializer, 'code') !== undefined && propertyNamed(error.initializer, 'message') !== undefined) {
          report(node, 'an error object');
        }
      }
      const code = propertyNamed(node, 'code');
      if (code !== undefined && ts.isPropertyAssignment(code) && isWireCode(code.initializer)) report(node, 'an error object');
    }
    // A wire code picked by hand is a refusal bypassing the mapping; only an error the upstream
    // itself answered (`UpstreamRpcError`) carries a wire code of its own.
    if (isWireCode(node) && !isUpstreamAnswer(node)) report(node, 'a wire code picked outside errors.ts');
    if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(node.operand)) {
      const value = Number(node.operand.text);
      if (value >= 32000 && value <= 32768) report(node, `a JSON-RPC error code (-${node.operand.text})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return problems;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('JSON-RPC errors in src/', () => {
  it('are built only in src/errors.ts', () => {
    const problems = sourceFiles(join(repo, 'src'))
      .filter((file) => file !== TAXONOMY)
      .flatMap((file) => inlineErrors(readFileSync(file, 'utf8')).map((problem) => `${relative(repo, file)}:${problem}`));
    expect(problems).toEqual([]);
  });

  it('are built in src/errors.ts (the scan sees what it is meant to)', () => {
    expect(inlineErrors(readFileSync(TAXONOMY, 'utf8')).length).toBeGreaterThan(0);
  });

  it.each([
    ["const body = { jsonrpc: '2.0', id, error };", ['1: a JSON-RPC error response']],
    ["send({ jsonrpc: '2.0', id: null, error: toJsonRpcError(e) });", ['1: a JSON-RPC error response']],
    ["JSON.stringify({ 'jsonrpc': '2.0', 'error': { code, message } })", ['1: a JSON-RPC error response']],
    ["return { ...task, error: { code: error.rpcCode, message: error.message } };", ['1: an error object']],
    ["const e = { code: WireCode.InvalidRequest, message: 'no' };", ['1: an error object', '1: a wire code picked outside errors.ts']],
    ["return jsonRpcErrorResponse(404, WireCode.InvalidRequest, 'Session not found');", ['1: a wire code picked outside errors.ts']],
    ['const SESSION_NOT_FOUND = -32001;', ['1: a JSON-RPC error code (-32001)']],
    ['\nreject(-32700)', ['2: a JSON-RPC error code (-32700)']],
  ])('flags %j', (text, expected) => {
    expect(inlineErrors(text)).toEqual(expected);
  });

  it.each([
    "const init = { jsonrpc: '2.0', id: 'x', method: 'initialize', params };",
    "return { kind: 'error', error: { errorType: 'POLICY_REFUSED', message } };",
    "return errorResponse(new GatewayError('SESSION_NOT_FOUND', 'Session not found'));",
    '// answers -32001 when the upstream is gone',
    "const message = 'code -32600 means invalid request';",
    'const port = -3200;',
    "return new UpstreamRpcError(WireCode.MethodNotFound, 'Method not found');",
  ])('does not flag %j', (text) => {
    expect(inlineErrors(text)).toEqual([]);
  });
});

describe('docs/errors.md', () => {
  it('lists every machine code with the HTTP status and JSON-RPC code errors.ts gives it', () => {
    const documented = new Map<string, [number, number]>();
    for (const line of readFileSync(join(repo, 'docs', 'errors.md'), 'utf8').split('\n')) {
      const row = /^\| ((?:`[A-Z_]+`(?: \/ )?)+) \| (\d{3}) \| (-\d+) \|/.exec(line);
      if (row === null) continue;
      for (const [, code] of row[1]!.matchAll(/`([A-Z_]+)`/g)) documented.set(code!, [Number(row[3]), Number(row[2])]);
    }
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(Object.entries(taxonomy).map(([code, [rpc, status]]) => [code, [rpc, status]])));
  });
});
