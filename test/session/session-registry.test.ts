import { describe, expect, it } from 'vitest';
import { SessionRegistry, type ClosableSession } from '../../src/session/session-registry.js';

class FakeSession implements ClosableSession {
  closed = 0;
  busy = false;
  constructor(readonly id: string, public idleAt: number) {}
  async close() {
    this.closed++;
  }
  idleSince() {
    return this.busy ? undefined : this.idleAt;
  }
}

function registry(max = 3, idleTimeoutMs = 1_000) {
  const closed: Array<[string, string]> = [];
  const sessions = new SessionRegistry<FakeSession>({ max, idleTimeoutMs, onClosed: (id, why) => closed.push([id, why]) });
  return { sessions, closed };
}

describe('SessionRegistry', () => {
  it('expires a session idle past the timeout and closes it', async () => {
    const { sessions, closed } = registry();
    const s = new FakeSession('a', 0);
    sessions.add(s);
    sessions.expireIdle(999);
    expect(sessions.get('a')).toBe(s);
    sessions.expireIdle(1_000);
    expect(sessions.get('a')).toBeUndefined();
    expect(s.closed).toBe(1);
    expect(closed).toEqual([['a', 'expired']]);
    await sessions.closeAll();
  });

  it('never expires a session with a call or stream open, however long', async () => {
    const { sessions } = registry();
    const s = new FakeSession('busy', 0);
    s.busy = true;
    sessions.add(s);
    sessions.expireIdle(10_000_000);
    expect(sessions.get('busy')).toBe(s);
    expect(s.closed).toBe(0);
    await sessions.closeAll();
  });

  it('reports deletions and shutdown as such', async () => {
    const { sessions, closed } = registry();
    sessions.add(new FakeSession('d', Date.now()));
    sessions.add(new FakeSession('e', Date.now()));
    sessions.delete('d');
    await sessions.closeAll();
    expect(closed).toEqual([
      ['d', 'deleted'],
      ['e', 'shutdown'],
    ]);
  });
});
