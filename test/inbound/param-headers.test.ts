import { describe, expect, it } from 'vitest';
import { MAX_FORWARDED_PARAM_HEADERS, paramHeadersOf } from '../../src/inbound/param-headers.js';

describe('paramHeadersOf', () => {
  it('keeps every Mcp-Param-* header as sent (names lower-cased, values untouched) and nothing else', () => {
    const headers = new Headers({
      'Mcp-Param-Region': 'us-west1',
      'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=',
      'Mcp-Method': 'tools/call',
      Authorization: 'Bearer secret',
      'X-Mcp-Param-Fake': 'no',
    });
    expect(paramHeadersOf(headers)).toEqual({ 'mcp-param-region': 'us-west1', 'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=' });
  });

  it('answers undefined when there are none, or no headers at all', () => {
    expect(paramHeadersOf(new Headers({ 'content-type': 'application/json' }))).toBeUndefined();
    expect(paramHeadersOf(undefined)).toBeUndefined();
  });

  it('forwards at most MAX_FORWARDED_PARAM_HEADERS of a flood', () => {
    const flood = new Headers();
    for (let i = 0; i < 500; i++) flood.set(`mcp-param-p${i}`, String(i));
    expect(Object.keys(paramHeadersOf(flood) ?? {})).toHaveLength(MAX_FORWARDED_PARAM_HEADERS);
  });
});
