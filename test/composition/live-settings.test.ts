/**
 * A reload swaps the live settings whole (src/composition/live-settings.ts): every view handed out
 * before the swap — the merge's visibility, the endpoints' body limits, the audit's tool filters,
 * the env names a new upstream connection may read — answers from the new settings at once, and
 * never from a mix of old and new.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { compileSettings, liveSettings } from '../../src/composition/live-settings.js';

const raw = (extra: Record<string, unknown>) => ({
    servers: {
      web: { transport: 'streamableHttp', url: 'http://127.0.0.1:9/mcp', allowPrivateNetwork: true, envHeaders: { 'X-Key': 'WEB_KEY' }, ...extra },
      local: { transport: 'stdio', command: 'node', args: ['x.js'] },
    },
  });
const config = (extra: Record<string, unknown>) => parseConfig(raw(extra));

describe('live settings', () => {
  it('answers every view handed out before a reload from the settings the reload swapped in', () => {
    const first = config({ disabledTools: ['drop'] });
    const live = liveSettings(compileSettings(first, first.servers));
    const { visibility, bodyLimits, toolFilters } = live;
    expect(visibility('web', 'drop', 'web__drop')).toBe(false);
    expect(visibility('web', 'keep', 'web__keep')).toBe(true);
    expect(toolFilters.get('web')?.('drop')).toBe(false);
    expect(live.current.allowedEnvNames).toContain('WEB_KEY');
    const maxBytes = bodyLimits.maxBytes;

    const next = parseConfig({ ...raw({ enabledTools: ['only'], envHeaders: { 'X-Other': 'OTHER_KEY' } }), limits: { maxBodyBytes: maxBytes / 2 } });
    live.swap(compileSettings(next, next.servers));
    expect(visibility('web', 'drop', 'web__drop')).toBe(false);
    expect(visibility('web', 'keep', 'web__keep')).toBe(false);
    expect(visibility('web', 'only', 'web__only')).toBe(true);
    expect(toolFilters.get('web')?.('only')).toBe(true);
    expect(bodyLimits.maxBytes).toBe(maxBytes / 2);
    expect(live.current.allowedEnvNames).toContain('OTHER_KEY');
    expect(live.current.allowedEnvNames).not.toContain('WEB_KEY');
  });

  it('shows a server a reload removed to no one, and one it added as its filters say', () => {
    const first = config({});
    const live = liveSettings(compileSettings(first, first.servers));
    const { visibility, toolFilters } = live;
    const next = parseConfig({ servers: { added: { transport: 'stdio', command: 'node', args: ['y.js'], disabledTools: ['secret'] } } });
    live.swap(compileSettings(next, next.servers));
    expect(visibility('web', 'keep', 'web__keep')).toBe(false);
    expect([...toolFilters.keys()]).toEqual(['added']);
    expect(visibility('added', 'open', 'added__open')).toBe(true);
    expect(visibility('added', 'secret', 'added__secret')).toBe(false);
  });
});
