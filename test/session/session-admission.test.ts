import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { memoryBuckets } from '../../src/policy/memory-buckets.js';
import type { BucketStore } from '../../src/policy/request-limits.js';
import { SessionAdmission, type Admission, type SessionTicket } from '../../src/session/session-admission.js';
import { SessionRegistry, type ClosableSession } from '../../src/session/session-registry.js';

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination: destination as never }) };
}

function admission(limits: { max?: number; maxPerPrincipal?: number; initializePerMinute?: number } = {}, buckets?: BucketStore) {
  const { lines, logger } = capturedLogger();
  const admit = new SessionAdmission({ max: 3, maxPerPrincipal: 3, initializePerMinute: 1000, logger, ...limits, ...(buckets === undefined ? {} : { buckets }) });
  return { admit, lines };
}

function ticketOf(admitted: Admission): SessionTicket {
  if (!admitted.ok) throw new Error(`refused: ${admitted.error.code}`);
  return admitted.ticket;
}

function codeOf(admitted: Admission): string | undefined {
  return admitted.ok ? undefined : admitted.error.code;
}

describe('SessionAdmission', () => {
  it('holds the gateway-wide cap until a session gives its place back, once', async () => {
    const { admit } = admission({ max: 2 });
    const first = ticketOf(await admit.admitInitialize(undefined));
    ticketOf(await admit.admitInitialize('alice'));
    expect(codeOf(await admit.admitInitialize('bob'))).toBe('SESSION_LIMIT');
    first.release();
    first.release();
    expect(admit.size).toBe(1);
    ticketOf(await admit.admitInitialize('bob'));
    expect(codeOf(await admit.admitInitialize('carol'))).toBe('SESSION_LIMIT');
  });

  it('counts adopted sessions in the same cap and the same principal quota', async () => {
    const { admit } = admission({ max: 2, maxPerPrincipal: 1 });
    ticketOf(admit.admitAdopted('alice'));
    expect(codeOf(await admit.admitInitialize('alice'))).toBe('PRINCIPAL_SESSION_LIMIT');
    ticketOf(await admit.admitInitialize('bob'));
    expect(codeOf(admit.admitAdopted('carol'))).toBe('SESSION_LIMIT');
  });

  it('keeps one principal within its quota without touching another’s', async () => {
    const { admit } = admission({ max: 10, maxPerPrincipal: 2 });
    const alice = [ticketOf(await admit.admitInitialize('alice')), ticketOf(await admit.admitInitialize('alice'))];
    const refused = await admit.admitInitialize('alice');
    expect(codeOf(refused)).toBe('PRINCIPAL_SESSION_LIMIT');
    ticketOf(await admit.admitInitialize('bob'));
    ticketOf(await admit.admitInitialize('bob'));
    alice[0]!.release();
    ticketOf(await admit.admitInitialize('alice'));
  });

  it('rate-limits initialize per principal with a retry time, and adoption not at all', async () => {
    let clock = 0;
    const { admit } = admission({ max: 100, maxPerPrincipal: 100, initializePerMinute: 2 }, memoryBuckets({ now: () => clock }));
    ticketOf(await admit.admitInitialize('alice'));
    ticketOf(await admit.admitInitialize('alice'));
    const refused = await admit.admitInitialize('alice');
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.error.code).toBe('RATE_LIMITED');
    expect(refused.error.retryAfterMs).toBe(30_000);
    expect(refused.error.message).toContain('retry after 30 s');
    ticketOf(await admit.admitInitialize('bob'));
    ticketOf(admit.admitAdopted('alice'));
    clock = 30_000;
    ticketOf(await admit.admitInitialize('alice'));
  });

  it('expires idle sessions of every registered registry before refusing', async () => {
    const { admit } = admission({ max: 2 });
    const registries = [0, 1].map(() => new SessionRegistry<ClosableSession>({ max: 2, idleTimeoutMs: 1_000 }));
    for (const registry of registries) admit.addReclaimer(() => registry.expireIdle());
    const session = (id: string, idleSince: number, ticket: SessionTicket): ClosableSession => ({
      id,
      idleSince: () => idleSince,
      close: async () => ticket.release(),
    });
    const live = session('live', Date.now(), ticketOf(await admit.admitInitialize(undefined)));
    const stale = session('stale', Date.now() - 5_000, ticketOf(await admit.admitInitialize(undefined)));
    registries[0]!.add(live);
    registries[1]!.add(stale);
    ticketOf(await admit.admitInitialize(undefined));
    expect(registries[1]!.get('stale')).toBeUndefined();
    expect(registries[0]!.get('live')).toBe(live);
    expect(codeOf(await admit.admitInitialize(undefined))).toBe('SESSION_LIMIT');
    await Promise.all(registries.map((r) => r.closeAll()));
  });

  it('tells the operator which limit refused, without flooding the log, and never a session id', async () => {
    const { admit, lines } = admission({ max: 1 });
    ticketOf(await admit.admitInitialize(undefined));
    for (let i = 0; i < 50; i++) await admit.admitInitialize(undefined);
    const refusals = lines.filter((line) => line.msg?.toString().startsWith('session refused'));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ level: 40, limit: 1, refused: 1 });
    expect(String(refusals[0]!.msg)).toContain('sessions.max');
    expect(JSON.stringify(lines)).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it.each([{ max: 0 }, { maxPerPrincipal: 0 }, { initializePerMinute: 1.5 }])('refuses limits %j', (limits) => {
    expect(() => admission(limits)).toThrow(TypeError);
  });
});
