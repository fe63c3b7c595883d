/**
 * A server a reload removed (`Enablement.withdraw`): no viewer sees it whatever the decisions
 * say, a session whose view it leaves is told once, and no decision lets it run again — until a
 * later reload names it again (`admit`, then `reinstate` once it is up). A server a reload adds
 * is decided as at start: its config `enabled` under the stored decisions for its key.
 */
import { describe, expect, it } from 'vitest';
import { Enablement } from '../../src/customizations/enablement/enablement.js';
import { DecisionTable, type EnablementStore } from '../../src/customizations/enablement/store.js';

function enablement(): Enablement {
  const table = new DecisionTable();
  const store: EnablementStore = {
    kind: 'file',
    load: async () => table,
    write: async (where, key, value) => table.apply(where, key, value),
    close: async () => undefined,
  };
  return new Enablement({
    items: [
      { key: 'config#mcp=a', server: 'a', configEnabled: true },
      { key: 'config#mcp=b', server: 'b', configEnabled: true },
    ],
    store,
    stored: table,
  });
}

describe('withdrawing a server', () => {
  it('hides it from every viewer and tells each session and sessionless listener once', () => {
    const owner = enablement();
    const session = owner.attach({ id: 's1', principal: undefined });
    let sessionHeard = 0;
    let sharedHeard = 0;
    session.onChange(() => sessionHeard++);
    owner.onChange(() => sharedHeard++);

    owner.withdraw('b');
    owner.withdraw('b');

    expect(session.visible(['a', 'b'])).toEqual(['a']);
    expect(owner.visible(['a', 'b'])).toEqual(['a']);
    expect(owner.visible(['a', 'b'], 'file:///w')).toEqual(['a']);
    expect([sessionHeard, sharedHeard]).toEqual([1, 1]);
  });

  it('is not brought back by a session, workspace or global decision enabling it', async () => {
    const owner = enablement();
    const session = owner.attach({ id: 's1', principal: undefined });
    owner.withdraw('b');
    await owner.toggle('config#mcp=b', { scope: 'session', session }, true);
    await owner.toggle('config#mcp=b', { scope: 'workspace', workspace: 'file:///w' }, true);
    await owner.toggle('config#mcp=b', { scope: 'global' }, true);
    expect(session.visible(['a', 'b'])).toEqual(['a']);
    expect(owner.visible(['a', 'b'], 'file:///w')).toEqual(['a']);
    expect(owner.globallyEnabled('b')).toBe(false);
    expect(owner.globallyEnabled('a')).toBe(true);
  });

  it('tells nobody whose view it had already left (a session that disabled it itself)', async () => {
    const owner = enablement();
    const session = owner.attach({ id: 's1', principal: undefined });
    await owner.toggle('config#mcp=b', { scope: 'session', session }, false);
    let heard = 0;
    session.onChange(() => heard++);
    session.recheck();
    owner.withdraw('b');
    expect(heard).toBe(0);
  });
});

describe('admitting a server a reload adds', () => {
  it('decides it as at start: its config default under the stored global decision for its key', async () => {
    const owner = enablement();
    expect(owner.admit({ key: 'config#mcp=c', server: 'c', configEnabled: true })).toBe(true);
    expect(owner.admit({ key: 'config#mcp=d', server: 'd', configEnabled: false })).toBe(false);
    expect(owner.visible(['a', 'c', 'd'])).toEqual(['a', 'c']);
    // A global decision stored for the key (an earlier run's, say) wins over the default.
    await owner.toggle('config#mcp=c', { scope: 'global' }, false);
    expect(owner.admit({ key: 'config#mcp=c', server: 'c', configEnabled: true })).toBe(false);
    expect(owner.globallyEnabled('c')).toBe(false);
  });

  it('keeps a removed server unseen when named again until it is reinstated, then tells each session once', () => {
    const owner = enablement();
    const session = owner.attach({ id: 's1', principal: undefined });
    owner.withdraw('b');
    let sessionHeard = 0;
    let sharedHeard = 0;
    session.onChange(() => sessionHeard++);
    owner.onChange(() => sharedHeard++);

    expect(owner.admit({ key: 'config#mcp=b', server: 'b', configEnabled: true })).toBe(true);
    expect(session.visible(['a', 'b'])).toEqual(['a']);
    expect([sessionHeard, sharedHeard]).toEqual([0, 0]);

    owner.reinstate('b');
    owner.reinstate('b');
    expect(session.visible(['a', 'b'])).toEqual(['a', 'b']);
    expect(owner.globallyEnabled('b')).toBe(true);
    expect([sessionHeard, sharedHeard]).toEqual([1, 1]);
  });
});
