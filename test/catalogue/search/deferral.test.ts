import { describe, expect, it } from 'vitest';
import { decideDeferral, type DeferToolsSetting, type ServerDeferSetting } from '../../../src/catalogue/search/deferral.js';

/**
 * Every combination of the global setting, the server's own `defer` and the session's
 * `deferTools`, on a catalogue of 11 visible tools: "pinned" (5 tools, the `defer` under test)
 * and "other" (6 tools, no `defer`). `{ above: 10 }` is exceeded by 11 tools; `{ above: 11 }`
 * (equal) and `{ above: 20 }` are not.
 *
 * Columns: global, pinned's defer, session, pinned deferred?, other deferred?
 */
const TABLE: Array<[DeferToolsSetting, ServerDeferSetting, boolean | undefined, boolean, boolean]> = [
  [false, true, true, true, true],
  [false, true, false, true, false],
  [false, true, undefined, true, false],
  [false, false, true, false, true],
  [false, false, false, false, false],
  [false, false, undefined, false, false],
  [false, undefined, true, true, true],
  [false, undefined, false, false, false],
  [false, undefined, undefined, false, false],
  [true, true, true, true, true],
  [true, true, false, true, false],
  [true, true, undefined, true, true],
  [true, false, true, false, true],
  [true, false, false, false, false],
  [true, false, undefined, false, true],
  [true, undefined, true, true, true],
  [true, undefined, false, false, false],
  [true, undefined, undefined, true, true],
  [{ above: 10 }, true, true, true, true],
  [{ above: 10 }, true, false, true, false],
  [{ above: 10 }, true, undefined, true, true],
  [{ above: 10 }, false, true, false, true],
  [{ above: 10 }, false, false, false, false],
  [{ above: 10 }, false, undefined, false, true],
  [{ above: 10 }, undefined, true, true, true],
  [{ above: 10 }, undefined, false, false, false],
  [{ above: 10 }, undefined, undefined, true, true],
  [{ above: 11 }, true, true, true, true],
  [{ above: 11 }, true, false, true, false],
  [{ above: 11 }, true, undefined, true, false],
  [{ above: 11 }, false, true, false, true],
  [{ above: 11 }, false, false, false, false],
  [{ above: 11 }, false, undefined, false, false],
  [{ above: 11 }, undefined, true, true, true],
  [{ above: 11 }, undefined, false, false, false],
  [{ above: 11 }, undefined, undefined, false, false],
  [{ above: 20 }, true, true, true, true],
  [{ above: 20 }, true, false, true, false],
  [{ above: 20 }, true, undefined, true, false],
  [{ above: 20 }, false, true, false, true],
  [{ above: 20 }, false, false, false, false],
  [{ above: 20 }, false, undefined, false, false],
  [{ above: 20 }, undefined, true, true, true],
  [{ above: 20 }, undefined, false, false, false],
  [{ above: 20 }, undefined, undefined, false, false],
];

describe('decideDeferral', () => {
  it.each(TABLE)('global %j, server defer %j, session %j → pinned %j, other %j', (global, defer, session, pinned, other) => {
    const decision = decideDeferral({
      global,
      session,
      servers: [
        { name: 'pinned', defer, visibleTools: 5 },
        { name: 'other', visibleTools: 6 },
      ],
    });
    expect(decision.deferred.has('pinned')).toBe(pinned);
    expect(decision.deferred.has('other')).toBe(other);
    expect(decision.deferredTools).toBe((pinned ? 5 : 0) + (other ? 6 : 0));
    expect(decision.source).toBe(session === undefined ? 'global' : 'session');
  });

  it('covers every combination exactly once', () => {
    const keys = new Set(TABLE.map(([g, d, s]) => JSON.stringify([g, d ?? null, s ?? null])));
    expect(keys.size).toBe(5 * 3 * 3);
  });

  it('counts pinned servers in the visible size that { above } is compared with', () => {
    // 3 + 9 = 12 > 10 only when the server pinned to direct listing is counted too.
    const decision = decideDeferral({
      global: { above: 10 },
      servers: [
        { name: 'direct', defer: false, visibleTools: 3 },
        { name: 'rest', visibleTools: 9 },
      ],
    });
    expect([...decision.deferred]).toEqual(['rest']);
  });

  it('defers nothing on an empty catalogue, even when deferral is on', () => {
    const decision = decideDeferral({ global: true, servers: [] });
    expect(decision.deferred.size).toBe(0);
    expect(decision.deferredTools).toBe(0);
  });
});
