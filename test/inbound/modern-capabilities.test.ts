import { describe, expect, it } from 'vitest';
import { modernServerCapabilities } from '../../src/inbound/modern-capabilities.js';

describe('modernServerCapabilities', () => {
  it('drops resources.subscribe, which 2026 listeners cannot be served yet, and keeps the rest', () => {
    const merged = { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, logging: {} };
    expect(modernServerCapabilities(merged)).toEqual({ tools: { listChanged: true }, resources: { listChanged: true }, logging: {} });
    expect(merged.resources.subscribe).toBe(true);
  });

  it('leaves capabilities without resource subscriptions as they are', () => {
    const merged = { tools: {}, resources: { listChanged: true } };
    expect(modernServerCapabilities(merged)).toBe(merged);
    expect(modernServerCapabilities({ tools: {} })).toEqual({ tools: {} });
  });
});
