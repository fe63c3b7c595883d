import { describe, expect, it } from 'vitest';
import { refusedResume } from '../../src/inbound/resume.js';
import { resumeProblem, type ResumeProblem } from '../../src/session/event-id.js';

describe('refusedResume', () => {
  it.each<[ResumeProblem, number, number, string]>([
    ['malformed', 400, -32600, 'RESUME_REFUSED'],
    ['unknown', 400, -32600, 'RESUME_REFUSED'],
    ['evicted', 410, -32600, 'RESUME_EVICTED'],
    ['unavailable', 503, -32001, 'RESUME_UNAVAILABLE'],
  ])('answers %s with HTTP %i and JSON-RPC code %i', async (code, status, rpcCode, gatewayCode) => {
    const point = resumeProblem(code);
    if (point.ok) throw new Error('unreachable');
    const response = refusedResume(point);
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: rpcCode, message: point.message, data: { code: gatewayCode } } });
  });
});
